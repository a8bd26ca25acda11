#!/bin/sh
# A dependency install that is slow but working: eight "downloads" of a second each into the package cache
# (/cache, the sandbox's own volume, which outlives a rollback to a snapshot), each announced as it lands, then
# the install into the checkout. A part the cache already holds is taken from there.
set -e
cache=/cache/slow-install-fixture
mkdir -p "$cache"
for i in 1 2 3 4 5 6 7 8; do
  if [ -f "$cache/part-$i" ]; then
    echo "part $i: from the cache"
    continue
  fi
  sleep 1
  head -c 65536 /dev/urandom > "$cache/part-$i.tmp"
  mv "$cache/part-$i.tmp" "$cache/part-$i"
  echo "part $i: downloaded"
done
cat "$cache"/part-1 "$cache"/part-2 "$cache"/part-3 "$cache"/part-4 "$cache"/part-5 "$cache"/part-6 \
  "$cache"/part-7 "$cache"/part-8 > installed.bin
echo "installed"
