"""Services a test suite talks to (PostgreSQL, MariaDB, Redis, ...), run inside the environment from Debian.

One install step installs the Debian server packages, writes START (an idempotent script that starts what
is not running and waits, bounded, until each accepts connections on loopback) and provisions what tests
commonly expect (roles, databases, trust on localhost). Test commands then run as `START && <command>`, so
every place that runs the tests (install loop, verification, the runtime's reward, exports) starts them.
Nothing here knows a language: ecosystems decide when a suite needs a service.
"""
from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from autoinstall.ecosystems.debian_names import APT

START = "/opt/autoinstall/services/start"
START_D = "/opt/autoinstall/services/start.d"
"""One file per service; START starts each, so service steps added at different times compose."""
LOG = "/var/log/autoinstall-services.log"
PYTEST_PLUGIN = "autoinstall_services"
"""The pytest plugin (`-p autoinstall_services`) that ran START in test commands recorded before a repair could
replace the test command (with_services); such a command already starts the services."""
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$")
"""A role, database or user name taken from CI config: anything else is not used."""


def _q(text: str) -> str:
    """`text` as one shell word."""
    return shlex.quote(text)


def _psql(sql: str) -> str:
    """Run `sql` as the postgres superuser over loopback (trust auth)."""
    return f"psql -q -h 127.0.0.1 -U postgres -d postgres -c {_q(sql)}"


def _postgres_provision(env: dict[str, str]) -> list[str]:
    """Superuser roles for the current user, postgres and POSTGRES_USER; the databases tests name."""
    user = env.get("POSTGRES_USER", "postgres") if NAME.match(env.get("POSTGRES_USER", "")) else "postgres"
    password = _sql_text(env.get("POSTGRES_PASSWORD", ""))
    me = 'psql -q -h 127.0.0.1 -U postgres -d postgres -c "CREATE ROLE \\"$(id -un)\\" SUPERUSER LOGIN"'
    out = [f"{me} 2>/dev/null || true"]
    if user != "postgres":
        out.append(_psql(f'CREATE ROLE "{user}" SUPERUSER LOGIN') + " 2>/dev/null || true")
    if password:
        out.append(_psql(f"ALTER ROLE \"{user}\" PASSWORD '{password}'"))
    for db in dict.fromkeys([env.get("POSTGRES_DB", ""), user, *_extra_dbs(env)]):
        if db and NAME.match(db):
            out.append(f"createdb -h 127.0.0.1 -U postgres -O {_q(user)} {_q(db)} 2>/dev/null || true")
    out.append('createdb -h 127.0.0.1 -U postgres "$(id -un)" 2>/dev/null || true')
    return out


def _mysql_provision(env: dict[str, str]) -> list[str]:
    """root over TCP without a password (or CI's), the CI user and databases."""
    sql = ["ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING "
           f"PASSWORD('{_sql_text(env.get('MYSQL_ROOT_PASSWORD') or env.get('MARIADB_ROOT_PASSWORD') or '')}')",
           "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY "
           f"'{_sql_text(env.get('MYSQL_ROOT_PASSWORD') or env.get('MARIADB_ROOT_PASSWORD') or '')}'",
           "GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION"]
    user = env.get("MYSQL_USER") or env.get("MARIADB_USER") or ""
    if user and NAME.match(user) and user != "root":
        password = _sql_text(env.get("MYSQL_PASSWORD") or env.get("MARIADB_PASSWORD") or "")
        for host in ("localhost", "127.0.0.1", "%"):
            sql += [f"CREATE USER IF NOT EXISTS '{user}'@'{host}' IDENTIFIED BY '{password}'",
                    f"GRANT ALL ON *.* TO '{user}'@'{host}'"]
    for db in dict.fromkeys([env.get("MYSQL_DATABASE", ""), env.get("MARIADB_DATABASE", ""), *_extra_dbs(env)]):
        if db and NAME.match(db):
            sql.append(f"CREATE DATABASE IF NOT EXISTS `{db}`")
    return [f"mariadb -u root -e {_q('; '.join(sql))}"]


def _sql_text(text: str) -> str:
    """A value safe inside a single-quoted SQL literal (CI passwords are plain words)."""
    return text.replace("\\", "").replace("'", "")


def _extra_dbs(env: dict[str, str]) -> list[str]:
    """Database names the suite's own variables give (e.g. `*_DB=name`, a URL's path)."""
    found = []
    for key, value in env.items():
        if re.search(r"(?:^|_)(?:DB|DBNAME|DATABASE|DB_NAME|TESTDB)$", key) and NAME.match(value):
            found.append(value)
        elif (url := service_url(value)) and NAME.match(url.database):
            found.append(url.database)  # a URL's path, but not redis's database number
    return found


@dataclass(frozen=True)
class ServiceKind:
    """A service: its Debian packages, how to start it as root in a container, and how to tell it is up."""

    name: str
    images: tuple[str, ...]
    """CI container images (last path part, no tag) that provide it."""
    packages: tuple[str, ...]
    port: int
    start: str
    """Run by START when `ready` fails; its output goes to LOG and it must not keep stdout open."""
    ready: str
    """Exits 0 once the service accepts connections on loopback."""
    prepare: str = ""
    """Configuration written once at install, before the first start."""
    provision: Callable[[dict[str, str]], list[str]] | None = None
    """Commands run once at install with the service up, given the CI service's env."""
    stop: str = ""
    """Leaves a clean data directory in the image after provisioning."""
    seconds: int = 60


_PG_CLUSTER = 'set -- $(pg_lsclusters -h | head -n1); '
_NO_PROCESS = "! grep -qsx {comm} /proc/[0-9]*/comm"
SERVICES: dict[str, ServiceKind] = {s.name: s for s in [
    ServiceKind(
        name="postgresql", images=("postgres", "postgresql", "postgis"), packages=("postgresql",), port=5432,
        prepare=f'{_PG_CLUSTER}pg_ctlcluster "$1" "$2" stop 2>/dev/null || true; '
                "for f in /etc/postgresql/*/*/pg_hba.conf; do printf '%s\\n' 'local all all trust' "
                "'host all all 127.0.0.1/32 trust' 'host all all ::1/128 trust' > \"$f\"; done; "
                # A test database is thrown away: durability only slows the suite (and every task validation).
                "for d in /etc/postgresql/*/*/conf.d; do printf '%s\\n' 'fsync = off' 'synchronous_commit = off' "
                "'full_page_writes = off' > \"$d/autoinstall-tests.conf\"; done",
        start=f"if {_NO_PROCESS.format(comm='postgres')}; then rm -f /var/lib/postgresql/*/*/postmaster.pid "
              f"/var/run/postgresql/.s.PGSQL.*; fi; {_PG_CLUSTER}pg_ctlcluster \"$1\" \"$2\" start",
        ready="pg_isready -q -h 127.0.0.1 -p 5432", provision=_postgres_provision,
        stop=f'{_PG_CLUSTER}pg_ctlcluster "$1" "$2" stop'),
    ServiceKind(
        name="mysql", images=("mysql", "mariadb", "percona"), packages=("mariadb-server",), port=3306,
        start=f"if {_NO_PROCESS.format(comm='mariadbd')}; then rm -f /run/mysqld/mysqld.pid; fi; "
              "mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld && (setsid mysqld_safe --skip-syslog &)",
        ready="mariadb-admin --protocol=socket ping", provision=_mysql_provision,
        stop="mariadb-admin shutdown"),
    ServiceKind(
        name="redis", images=("redis", "redis-stack", "valkey"), packages=("redis-server",), port=6379,
        start="redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no",
        ready="redis-cli -h 127.0.0.1 -p 6379 ping | grep -q PONG", stop="redis-cli -p 6379 shutdown nosave"),
    ServiceKind(
        name="memcached", images=("memcached",), packages=("memcached",), port=11211,
        start="memcached -d -u memcache -l 127.0.0.1 -p 11211",
        ready="(exec 3<>/dev/tcp/127.0.0.1/11211)"),
    ServiceKind(
        name="rabbitmq", images=("rabbitmq",), packages=("rabbitmq-server",), port=5672,
        start="(setsid rabbitmq-server &)", ready="(exec 3<>/dev/tcp/127.0.0.1/5672)", seconds=120,
        stop="rabbitmqctl stop"),
]}
"""Services Debian packages and tests commonly need. MongoDB and Elasticsearch are not in Debian."""
PORTS = {str(s.port): s.name for s in SERVICES.values()}
WELL_KNOWN_PORTS = {**PORTS, "27017": "mongodb", "9200": "elasticsearch", "5984": "couchdb", "9042": "cassandra",
                    "7687": "neo4j", "8086": "influxdb", "2181": "zookeeper", "9092": "kafka", "4222": "nats",
                    "2379": "etcd", "8500": "consul", "1433": "mssql", "1521": "oracle"}
"""The ports a refused connection can be blamed on a service by: those the environment runs, and others'."""
_PORT_MENTION = re.compile(r"(?:[:.]|\bport\s+)(?P<port>\d{2,5})\b")


def well_known_service(message: str) -> str:
    """The service whose well-known port a failure message names (`127.0.0.1:6379`, `port 5432`,
    `.s.PGSQL.5432`), "" when it names none: a refusal on another port (a server the suite starts itself)
    is no evidence that a service is missing."""
    return next((WELL_KNOWN_PORTS[m.group("port")] for m in _PORT_MENTION.finditer(message)
                 if m.group("port") in WELL_KNOWN_PORTS), "")
NOT_IN_DEBIAN = ("mongo", "mongodb", "elasticsearch", "opensearch", "cassandra", "scylla", "couchdb", "couchbase",
                 "neo4j", "influxdb", "clickhouse-server", "cockroach", "localstack", "minio", "kafka", "cp-kafka",
                 "zookeeper", "nats", "etcd", "consul", "vault", "azurite", "mssql-server", "oracle-xe", "selenium")
"""Images of services tests use that Debian does not package (a compose file naming one gets a note)."""
SCHEMES = {"postgres": "postgresql", "postgresql": "postgresql", "postgis": "postgresql", "pgsql": "postgresql",
           "mysql": "mysql", "mariadb": "mysql", "redis": "redis", "rediss": "redis", "memcached": "memcached",
           "memcache": "memcached", "amqp": "rabbitmq", "pyamqp": "rabbitmq", "librabbitmq": "rabbitmq"}
"""URL schemes (before any `+driver`) -> the service such a URL reaches."""
_URL = re.compile(r"^(?P<scheme>[A-Za-z][\w.-]*)(?:\+[\w.-]+)?://(?:(?P<user>[^:@/\s]*)(?::(?P<password>[^@/\s]*))?@)?"
                  r"(?P<host>\[[^\]]*\]|[^:/\s?]*)(?::(?P<port>\d+))?(?:/(?P<path>[^?\s]*))?")
LOOPBACK = re.compile(r"^(localhost|127(?:\.\d{1,3}){3}|\[?::1\]?|0\.0\.0\.0)$", re.IGNORECASE)


def not_in_debian(image: str) -> bool:
    """True for the image of a service tests use that Debian does not package (mongo, elasticsearch, ...)."""
    return image.lower().split("@")[0].split(":")[0].rsplit("/", 1)[-1] in NOT_IN_DEBIAN


@dataclass(frozen=True)
class ServiceUrl:
    """A connection URL of a known service: the service, where it points and what it logs in as."""

    kind: ServiceKind
    host: str
    port: int | None
    user: str
    password: str
    database: str

    @property
    def loopback(self) -> bool:
        """The URL points at this machine (where the environment runs the service)."""
        return bool(LOOPBACK.match(self.host))

    def provision_env(self) -> dict[str, str]:
        """The container variables (POSTGRES_USER, MYSQL_DATABASE, ...) that provision what the URL logs in as."""
        prefix = {"postgresql": "POSTGRES", "mysql": "MYSQL"}.get(self.kind.name)
        if prefix is None:
            return {}
        values = {"USER": self.user, "PASSWORD": self.password,
                  "DB" if prefix == "POSTGRES" else "DATABASE": self.database}
        return {f"{prefix}_{k}": v for k, v in values.items() if v and NAME.match(v)}


def service_url(value: str) -> ServiceUrl | None:
    """The known service a connection URL (`postgresql+psycopg2://u:p@localhost:5432/db`) reaches, or None."""
    match = _URL.match(value.strip())
    name = SCHEMES.get(match.group("scheme").lower()) if match else None
    if match is None or name is None:
        return None
    database = (match.group("path") or "").split("/")[0] if name != "redis" else ""
    return ServiceUrl(kind=SERVICES[name], host=match.group("host") or "localhost",
                      port=int(match.group("port")) if match.group("port") else None,
                      user=match.group("user") or "", password=match.group("password") or "", database=database)


def service_named(name: str) -> ServiceKind | None:
    """The service a name (`postgresql`, `postgres`, `mariadb`, `redis`) or CI image stands for."""
    key = name.lower().split("@")[0].split(":")[0].rsplit("/", 1)[-1]
    return SERVICES.get(key) or next((s for s in SERVICES.values() if key in s.images), None)


def service_on_port(port: int | str) -> ServiceKind | None:
    """The known service whose default port this is."""
    return SERVICES.get(PORTS.get(str(port), ""))


def start_script() -> str:
    """START: for each service in START_D, start it unless it answers, then wait (bounded) until it does."""
    return "\n".join([
        "#!/bin/bash", "# Written by autoinstall: start the services the tests need (idempotent, bounded).",
        f"LOG={LOG}", "status=0", f"for f in {START_D}/*; do", '  [ -f "$f" ] || continue',
        '  ( . "$f"', '    if ! ready >/dev/null 2>&1; then start >>"$LOG" 2>&1 </dev/null; fi',
        '    for ((i = 0; i < seconds * 4; i++)); do ready >/dev/null 2>&1 && exit 0; sleep 0.25; done',
        '    echo "autoinstall: $name did not accept connections within $seconds s; the end of $LOG:" >&2',
        '    tail -n 15 "$LOG" >&2; exit 1 ) || status=1', "done", "exit $status", ""])


def service_file(kind: ServiceKind) -> str:
    """START_D/<name>: what START sources for one service (name, seconds, ready, start)."""
    return "\n".join([f"# {kind.name} on 127.0.0.1:{kind.port}", f"name={kind.name} seconds={kind.seconds}",
                      f"ready() {{ {kind.ready}; }}", f"start() {{ {kind.start}; }}", ""])


def _heredoc(path: str, text: str) -> str:
    """Write `text` to `path` verbatim (quoted here-document)."""
    return f"cat > {path} <<'AUTOINSTALL_EOF'\n{text.rstrip()}\nAUTOINSTALL_EOF"


def install_command(kinds: list[ServiceKind], env: dict[str, str] | None = None) -> str:
    """One bash command: install the packages, write START, configure, provision once, stop cleanly."""
    env = env or {}
    packages = sorted({p for k in kinds for p in k.packages})
    parts = ["set -e", f"{APT} {' '.join(packages)}", f"mkdir -p {START_D}", _heredoc(START, start_script()),
             f"chmod +x {START}", *[_heredoc(f"{START_D}/{k.name}", service_file(k)) for k in kinds]]
    parts += [k.prepare for k in kinds if k.prepare]
    provisioned = [k for k in kinds if k.provision]
    if provisioned:
        parts.append(START)
        for kind in provisioned:
            parts += kind.provision(env) if kind.provision else []
        parts += [k.stop for k in kinds if k.stop]
    return "\n".join(parts)


def _about_a_service(key: str) -> bool:
    """A variable name that says where or how to reach a service (`*_DB`, `*_HOST`, `PG*`, `REDIS_URL`)."""
    return any(word.endswith(("DB", "DSN", "URL", "URI", "HOST", "PORT", "USER", "PASSWORD", "DATABASE", "DBNAME"))
               or word.startswith(("PG", "POSTGRES", "MYSQL", "MARIADB", "REDIS", "MEMCACHE", "RABBIT", "AMQP",
                                   "BROKER", "DATABASE"))
               for word in key.upper().split("_"))


_URL_HOST = re.compile(r"(\w[\w+.-]*://(?:[^@/\s]*@)?)([\w.-]+)(?=[:/?,\s]|$)")
"""A URL's host (not its user, password or path), after `scheme://user:password@`."""
_DSN_HOST = re.compile(r"(\bhost\s*=\s*)([\w.-]+)")
"""A libpq key=value connection string's host."""


def client_env(job_env: dict[str, str], services: dict[str, str]) -> dict[str, str]:
    """The variables CI gives the test job for reaching its services, with the service hosts made loopback.

    Args:
        job_env: the test job's `env` (literal values only).
        services: service name in CI (a host name in container jobs) -> the service it is.
    """
    out = {}
    for key, value in job_env.items():
        if not _about_a_service(key) or "${{" in value or "$(" in value:
            continue
        value = _URL_HOST.sub(lambda m: m[1] + ("127.0.0.1" if m[2] in services else m[2]), value)
        value = _DSN_HOST.sub(lambda m: m[1] + ("127.0.0.1" if m[2] in services else m[2]), value)
        if re.search("HOST", key, re.IGNORECASE) and (value in services or value == "localhost"
                                             or re.fullmatch(r"\d+\.\d+\.\d+\.\d+", value)):
            value = "127.0.0.1"  # the service runs on this machine here, not in CI's container network
        out[key] = value
    return out


_STARTED = re.compile(rf"^{re.escape(START)} && (?:export (?:[A-Za-z_]\w*=(?:'[^']*'|\"[^\"]*\"|[^\s'\"]+)+ ?)+&& )?")
"""What with_services puts before a command: START, then the exported variables."""


def services_prefix(command: str) -> str:
    """The start of the services (and their variables) that `command` begins with, "" when it starts none."""
    match = _STARTED.match(command)
    return match.group(0) if match else ""


def started_like(command: str, test_command: str | None) -> str:
    """`command` going through the services' start first, as `test_command` does (unchanged when that starts
    none, or `command` already does): whatever collects or runs the tests needs the services up."""
    prefix = services_prefix(test_command or "")
    return command if not prefix or command.startswith(START) else prefix + command


def with_services(command: str, env: dict[str, str] | None = None) -> str:
    """`START && [export VARS &&] command`: the form every test runner's command takes here."""
    if command.startswith(START):
        return command
    exports = " ".join(f"{k}={_q(v)}" for k, v in sorted((env or {}).items()) if re.match(r"^[A-Za-z_]\w*$", k))
    return f"{START} && " + (f"export {exports} && " if exports else "") + command
