#!/usr/bin/env bash
# Prepare a Debian machine (as root) for autoinstall: Docker engine, debootstrap, uv, the project's
# virtualenv and the default base image. Idempotent: each part is skipped when already there.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v uv >/dev/null 2>&1 || python3 -m pip install -q uv

# The clients the export checks run (Harbor, swebench, verl with PyTorch: gigabytes of downloads) install in
# the background while the engine and the base image are made; their messages come at the end.
install_tools() {
  if ! command -v harbor >/dev/null 2>&1 && [ ! -x "$HOME/.local/bin/harbor" ]; then
    py312=$(ls -d /root/.pyenv/versions/3.12*/bin/python 2>/dev/null | head -n 1 || true)
    if [ -n "$py312" ]; then
      echo "setup: installing Harbor (uv tool, Python ${py312%/bin/python})"
      uv tool install -q --python "$py312" harbor==0.25.0
    else
      echo "setup: no Python >= 3.12 found for Harbor; the harbor export checks will fail under CI" >&2
    fi
  fi

  # For the task export checks (tests/envs/test_task_clients.py): swebench 5.x, and verl with PyTorch (PyPI's
  # wheels) plus what envs/verl_tool.py imports (not pyproject's packaging pin, which downgrades verl's
  # tensordict), each in a cached tool venv outside the project's own.
  tools="$HOME/.cache/autoinstall/tools"
  tool_py=$(ls -d /root/.pyenv/versions/3.12*/bin/python 2>/dev/null | head -n 1 || true)
  tool_py=${tool_py:-3.12}
  if [ ! -f "$tools/swebench/.ready" ]; then
    echo "setup: installing swebench 5.x into $tools/swebench"
    uv venv -q --clear --python "$tool_py" "$tools/swebench"
    uv pip install -q --python "$tools/swebench/bin/python" 'swebench>=5,<6' && touch "$tools/swebench/.ready"
  fi
  if [ ! -f "$tools/verl/.ready" ]; then
    echo "setup: installing verl (and PyTorch, a large download) into $tools/verl"
    uv venv -q --clear --python "$tool_py" "$tools/verl"
    uv pip install -q --python "$tools/verl/bin/python" verl cachetools uvicorn fastapi docker gitpython typer rich \
      pyyaml 'tree-sitter>=0.23' tree-sitter-python tree-sitter-javascript tree-sitter-typescript tree-sitter-go \
      tree-sitter-rust tree-sitter-java && touch "$tools/verl/.ready"
  fi
  "$tools/verl/bin/python" -c "import tree_sitter_java" 2>/dev/null ||
    uv pip install -q --python "$tools/verl/bin/python" tree-sitter-java  # a venv made before Java's grammar joined
  for tool in swebench verl; do
    [ -f "$tools/$tool/.ready" ] || { echo "setup: $tool did not install into $tools/$tool" >&2; return 1; }
  done
}
tools_log=$(mktemp /tmp/autoinstall-setup-tools.XXXXXX)
install_tools >"$tools_log" 2>&1 &
tools_pid=$!

need_apt=()
command -v dockerd >/dev/null 2>&1 || need_apt+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_apt+=(debootstrap)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
command -v docker-registry >/dev/null 2>&1 || need_apt+=(docker-registry)
# Debian's headless chromium: tests/envs/test_catalog_report_browser.py opens the catalog report in it.
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} from Debian"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  if [ -z "${DOCKER_HOST:-}" ]; then
    echo "setup: starting dockerd in the background (log: /var/log/autoinstall-dockerd.log)"
    nohup dockerd >/var/log/autoinstall-dockerd.log 2>&1 &
  fi
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "setup: the Docker engine did not answer within 60 s; see /var/log/autoinstall-dockerd.log" >&2; exit 1; }
fi

uv sync -q
uv run autoinstall base build

# For `export --format harbor` checks: Docker Compose v2 (+ buildx) from Debian trixie's packages, taken
# apart with dpkg -x so the system's apt state is untouched, and Harbor itself (needs Python >= 3.12).
if ! docker compose version >/dev/null 2>&1; then
  echo "setup: installing Docker Compose v2 and buildx as CLI plugins (from Debian trixie)"
  t=$(mktemp -d)
  mkdir -p "$t/lists/partial" "$t/cache/archives/partial"
  echo "deb http://deb.debian.org/debian trixie main" > "$t/trixie.list"
  apt_t=(-o "Dir::Etc::sourcelist=$t/trixie.list" -o "Dir::Etc::sourceparts=-" -o "Dir::State::Lists=$t/lists"
         -o "Dir::Cache=$t/cache")
  apt-get "${apt_t[@]}" update -q >/dev/null
  (cd "$t" && apt-get "${apt_t[@]}" download docker-compose docker-buildx >/dev/null)
  for deb in "$t"/docker-compose_*.deb "$t"/docker-buildx_*.deb; do dpkg -x "$deb" "$t/x"; done
  install -D -m755 "$t/x/usr/libexec/docker/cli-plugins/docker-compose" /usr/local/lib/docker/cli-plugins/docker-compose
  install -D -m755 "$t/x/usr/libexec/docker/cli-plugins/docker-buildx" /usr/local/lib/docker/cli-plugins/docker-buildx
  rm -rf "$t"
fi

if ! wait "$tools_pid"; then
  cat "$tools_log" >&2
  echo "setup: installing Harbor, swebench or verl failed (above); run scripts/setup.sh again once the cause is fixed" >&2
  exit 1
fi
cat "$tools_log"
rm -f "$tools_log"
