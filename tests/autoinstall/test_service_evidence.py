"""Service evidence beyond CI `services:`: docker-compose files and tox/nox variables (fast, no Docker)."""
from __future__ import annotations

import shlex
from pathlib import Path

from autoinstall.ecosystems.services import START, START_D, service_url
from autoinstall.plan.models import get_model
from autoinstall.survey import survey
from envs.spec import Plan

PROJECT = {"pyproject.toml": '[project]\nname = "m"\nversion = "0"\n', "tests/test_m.py": "def test_m():\n    pass\n"}
COMPOSE = """\
services:
  app:
    build: .
    environment:
      - DATABASE_URL=postgresql://shop:secret@db:5432/shop_test
      - API_TOKEN=${TOKEN}
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: shop
      POSTGRES_PASSWORD: ${PGPASSWORD:-secret}
      POSTGRES_DB: shop_test
    ports:
      - "5432:5432"
  cache:
    image: redis:7-alpine
    ports: ["6380:6379"]
"""


def _repo(root: Path, files: dict[str, str]) -> Path:
    for name, text in {**PROJECT, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _plan(root: Path) -> Plan:
    return get_model("embedded", pythons=("3.11", "3.13")).propose(survey(root), root)


def _service_step(plan: Plan) -> str:
    return next(s.command for s in plan.steps if START in s.command)


def test_compose_services_with_environment_and_ports(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"docker-compose.yml": COMPOSE})
    facts = survey(root)
    db, cache = facts.services
    assert (db.name, db.image, db.source) == ("db", "postgres:16", "compose")
    assert (db.evidence.file, db.evidence.line, db.evidence.text) == ("docker-compose.yml", 8, "image: postgres:16")
    assert db.env == {"POSTGRES_USER": "shop", "POSTGRES_PASSWORD": "secret", "POSTGRES_DB": "shop_test"}
    assert db.client_env == {"DATABASE_URL": "postgresql://shop:secret@db:5432/shop_test"}  # ${TOKEN}: no value
    assert cache.evidence.line == 16
    assert any("cache is published on port 6380" in n and "default port 6379" in n for n in facts.notes)
    assert not any("port 5432 (" in n for n in facts.notes)  # published on its own port: nothing to say
    plan = _plan(root)
    step = next(s for s in plan.steps if START in s.command)
    assert step.kind == "system" and [e.file for e in step.evidence] == ["docker-compose.yml"] * 2
    assert "--no-install-recommends postgresql redis-server\n" in step.command
    assert 'CREATE ROLE "shop" SUPERUSER LOGIN' in step.command and "-O shop shop_test" in step.command
    assert "docker-compose.yml" in step.why
    assert plan.test_command == (f"{START} && export DATABASE_URL=postgresql://shop:secret@127.0.0.1:5432/shop_test"
                                 " && python -m pytest tests")


def test_compose_file_under_tests_and_its_variants(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"tests/docker-compose.test.yml": "services:\n  mq:\n    image: rabbitmq:3-management\n",
                            "ci/compose.yaml": "services:\n  mc:\n    image: memcached:1.6\n"})
    facts = survey(root)
    assert [(s.name, s.evidence.file, s.evidence.line) for s in facts.services] == [
        ("mq", "tests/docker-compose.test.yml", 3), ("mc", "ci/compose.yaml", 3)]
    assert "rabbitmq-server" in _service_step(_plan(root)) and "memcached" in _service_step(_plan(root))


def test_a_compose_folder_linked_out_of_the_checkout_is_not_listed(tmp_path: Path) -> None:
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "docker-compose.yml").write_text("services:\n  db:\n    image: postgres:16\n")
    root = _repo(tmp_path / "repo", {})
    (root / "ci").symlink_to(outside)
    facts = survey(root)
    assert facts.services == []
    assert not any("docker-compose" in n for n in facts.notes)  # not even its name reaches the plan


def test_an_unknown_image_is_not_a_service(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"compose.yml": "services:\n  web:\n    image: python:3.12-slim\n"
                                           "  worker:\n    build: .\n  proxy:\n    image: nginx\n"})
    facts = survey(root)
    assert facts.services == []
    plan = _plan(root)
    assert not any(START in s.command for s in plan.steps) and not any("Debian" in n for n in plan.notes)


def test_a_malformed_compose_file_is_noted_not_raised(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"docker-compose.yml": "services:\n  db:\n    image: [postgres\n"})
    facts = survey(root)
    assert facts.services == []
    assert any(n.startswith("docker-compose.yml: malformed YAML") for n in facts.notes)
    assert not any("skipped part of the survey" in n for n in facts.notes)


def test_a_compose_service_debian_does_not_package_is_a_note_not_a_step(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"docker-compose.yaml": "services:\n  mongo:\n    image: mongo:7\n"
                                                   "    ports: ['27017:27017']\n"})
    (service,) = survey(root).services
    assert (service.name, service.source) == ("mongo", "compose")
    plan = _plan(root)
    assert not any(START in s.command for s in plan.steps) and START not in (plan.test_command or "")
    assert any(n.startswith("docker-compose.yaml: a mongo service (mongo:7) that Debian does not package")
               for n in plan.notes)


def test_tox_setenv_with_a_loopback_url(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"tox.ini": "[tox]\nenvlist = py3\n\n[testenv]\ndeps = pytest\n"
                                       "setenv =\n    DATABASE_URL = {env:DATABASE_URL:mysql+pymysql://shop:pw@localhost/shop}\n"
                                       "    py311: REDIS_HOST=localhost\n    OTHER_URL = postgres://db.example.org/x\n"
                                       "commands = pytest tests\n"})
    facts = survey(root)
    mysql, redis = facts.services
    assert (mysql.name, mysql.source, mysql.evidence.file, mysql.evidence.line) == ("mysql", "tox", "tox.ini", 7)
    assert mysql.env == {"MYSQL_USER": "shop", "MYSQL_PASSWORD": "pw", "MYSQL_DATABASE": "shop"}
    assert (redis.name, redis.evidence.line) == ("redis", 8)
    assert not any(s.name == "postgresql" for s in facts.services)  # not on this machine: not evidence
    plan = _plan(root)
    step = _service_step(plan)
    assert "mariadb-server redis-server\n" in step
    sql = shlex.split(next(line for line in step.splitlines() if line.startswith("mariadb -u root -e")))[-1]
    assert "CREATE USER IF NOT EXISTS 'shop'@'localhost' IDENTIFIED BY 'pw'" in sql
    assert "CREATE DATABASE IF NOT EXISTS `shop`" in sql
    assert plan.test_command is not None and plan.test_command.startswith(
        f"{START} && export DATABASE_URL=mysql+pymysql://shop:pw@localhost/shop OTHER_URL=")
    assert "REDIS_HOST=127.0.0.1" in plan.test_command


def test_tox_toml_set_env_and_a_port_the_environment_does_not_use(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"tox.toml": '[env_run_base]\ncommands = [["pytest"]]\n'
                                        '[env_run_base.set_env]\nCACHE = "redis://127.0.0.1:6390/1"\n'})
    facts = survey(root)
    (redis,) = facts.services
    assert (redis.name, redis.evidence.file, redis.evidence.line) == ("redis", "tox.toml", 4)
    assert any("CACHE points at port 6390" in n for n in facts.notes)


def test_nox_session_env(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n"
                                          "    session.env['PGHOST'] = '127.0.0.1'\n"
                                          "    session.env.update({'BROKER_URL': 'amqp://guest:guest@localhost//'})\n"
                                          "    session.run('pytest', env={'MEMCACHED_URL': 'memcached://localhost'})\n"})
    facts = survey(root)
    assert sorted((s.name, s.source, s.evidence.line) for s in facts.services) == [
        ("memcached", "nox", 8), ("postgresql", "nox", 6), ("rabbitmq", "nox", 7)]
    plan = _plan(root)
    assert "memcached postgresql rabbitmq-server\n" in _service_step(plan)
    assert "nox's session env" in next(s.why for s in plan.steps if START in s.command)


def test_ci_and_compose_naming_the_same_service_give_one_service(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"docker-compose.yml": COMPOSE,
                            ".github/workflows/test.yml": "jobs:\n  t:\n    services:\n      pg:\n"
                                                          "        image: postgres:15\n    steps:\n      - run: pytest\n"})
    step = _service_step(_plan(root))
    assert step.count(f"cat > {START_D}/postgresql <<") == 1 and "CREATE ROLE \"shop\"" in step


def test_service_url_reads_driver_schemes_and_loopback() -> None:
    url = service_url("postgresql+psycopg2://u:p@[::1]:5433/db?sslmode=disable")
    assert url is not None and (url.kind.name, url.port, url.database, url.loopback) == ("postgresql", 5433, "db", True)
    assert service_url("https://localhost/x") is None and service_url("redis://cache:6379/0").loopback is False
