#!/usr/bin/env bash
# Prepare a Debian machine (as root) for autoinstall: Docker engine, debootstrap, uv, the project's
# virtualenv and the default base image. Idempotent: each part is skipped when already there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v dockerd >/dev/null 2>&1 || need_apt+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_apt+=(debootstrap)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
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

command -v uv >/dev/null 2>&1 || python3 -m pip install -q uv
uv sync -q
uv run autoinstall base build
