"""The service table, the start script it writes, and the variables taken from CI (fast, no Docker)."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from autoinstall.ecosystems.services import (
    LOG,
    SERVICES,
    START,
    START_D,
    client_env,
    install_command,
    service_named,
    service_on_port,
    start_script,
    with_services,
)


@pytest.mark.parametrize(("name", "service"), [
    ("postgres:16", "postgresql"), ("postgis/postgis:15-3.4", "postgresql"), ("postgresql", "postgresql"),
    ("mariadb:11", "mysql"), ("mysql", "mysql"), ("redis:7-alpine", "redis"), ("memcached", "memcached"),
    ("rabbitmq:3-management", "rabbitmq")])
def test_ci_images_and_names_map_to_a_service(name: str, service: str) -> None:
    kind = service_named(name)
    assert kind is not None and kind.name == service


def test_services_debian_lacks_and_unknown_ports_are_not_offered() -> None:
    assert service_named("mongo:7") is None and service_named("elasticsearch") is None
    assert service_on_port(27017) is None
    kind = service_on_port("5432")
    assert kind is not None and kind.packages == ("postgresql",)


def test_the_install_command_is_valid_bash_and_writes_one_file_per_service() -> None:
    command = install_command([SERVICES["postgresql"], SERVICES["redis"]], {"POSTGRES_DB": "app"})
    assert subprocess.run(["bash", "-n", "-c", command], capture_output=True).returncode == 0
    assert command.count(f"cat > {START_D}/") == 2 and f"chmod +x {START}" in command
    assert "postgresql redis-server\n" in command and "-O postgres app" in command
    assert command.index("pg_hba.conf") < command.index(f"\n{START}\n") < command.index("CREATE ROLE")
    assert command.index("'fsync = off' 'synchronous_commit = off'") < command.index(f"\n{START}\n")
    # stopped after provisioning: a clean data directory in the image
    assert command.rstrip().endswith('pg_ctlcluster "$1" "$2" stop\nredis-cli -p 6379 shutdown nosave')


def test_client_env_keeps_service_variables_and_points_hosts_at_loopback() -> None:
    env = client_env({"APP_DB_HOST": "pg", "APP_DB": "pg", "PGHOST": "172.17.0.1", "REDIS_URL": "redis://cache:6379",
                      "PIP_BREAK_SYSTEM_PACKAGES": "1", "API_HOST": "example.org", "PY": "${{ matrix.py }}"},
                     {"pg": "postgres:16", "cache": "redis:7"})
    assert env == {"APP_DB_HOST": "127.0.0.1", "APP_DB": "pg", "PGHOST": "127.0.0.1",
                   "REDIS_URL": "redis://127.0.0.1:6379", "API_HOST": "example.org"}


def test_client_env_rewrites_only_the_host_of_a_url_or_dsn() -> None:
    env = client_env({"DATABASE_URL": "postgresql://postgres:postgres@postgres:5432/postgres",
                      "PG_DSN": "host=postgres dbname=postgres user=postgres"}, {"postgres": "postgres:16"})
    assert env == {"DATABASE_URL": "postgresql://postgres:postgres@127.0.0.1:5432/postgres",
                   "PG_DSN": "host=127.0.0.1 dbname=postgres user=postgres"}


def test_with_services_prefixes_once_and_quotes_values() -> None:
    command = with_services("python -m pytest tests", {"A_DB": "x y"})
    assert command == f"{START} && export A_DB='x y' && python -m pytest tests"
    assert with_services(command, {"A_DB": "z"}) == command
    # testrun appends pytest options: they still reach pytest, after the prefix
    assert (command + " -p no:cacheprovider").endswith("python -m pytest tests -p no:cacheprovider")


def _script(tmp_path: Path) -> Path:
    """START with its folder and log moved under tmp_path, so it runs here without root."""
    script = tmp_path / "start"
    script.write_text(start_script().replace(START_D, str(tmp_path / "d")).replace(LOG, str(tmp_path / "log")))
    (tmp_path / "d").mkdir()
    return script


def test_start_script_starts_what_is_down_and_leaves_what_answers(tmp_path: Path) -> None:
    script, up, starts = _script(tmp_path), tmp_path / "up", tmp_path / "starts"
    (tmp_path / "d" / "fake").write_text(
        f"name=fake seconds=5\nready() {{ test -e {up}; }}\nstart() {{ echo x >> {starts}; touch {up}; }}\n")
    assert subprocess.run(["bash", str(script)], capture_output=True).returncode == 0
    assert subprocess.run(["bash", str(script)], capture_output=True).returncode == 0
    assert starts.read_text() == "x\n"  # started once: the second run found it answering


def test_start_script_gives_up_in_bounded_time_and_says_why(tmp_path: Path) -> None:
    script = _script(tmp_path)
    (tmp_path / "d" / "never").write_text("name=never seconds=1\nready() { false; }\nstart() { echo boom; }\n")
    began = time.monotonic()
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    assert result.returncode == 1 and time.monotonic() - began < 10
    assert "never did not accept connections within 1 s" in result.stderr and "boom" in result.stderr
    assert result.stdout == ""  # nothing on stdout: a runner's count line stays the last thing there
