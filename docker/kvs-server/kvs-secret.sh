#!/bin/sh
# Writes the KVS password of the docker rig to $KVS_SECRET_DIR/password (default /run/kvs-secret),
# the volume the KVS nodes (auth.passwordFile) and James (docker/james/entrypoint.sh) read it from.
# conf/ and james-conf/ ship no password. The password is $KVS_PASSWORD when set; otherwise one is
# generated from /dev/urandom (64 hex digits) the first time and kept in the volume afterwards, so
# restarting the rig keeps it. It is never printed. Run once per "up" by the kvs-secret service.
set -eu
dir="${KVS_SECRET_DIR:-/run/kvs-secret}"
file="$dir/password"
mkdir -p "$dir"
umask 022
if [ -n "${KVS_PASSWORD:-}" ]; then
  printf '%s\n' "$KVS_PASSWORD" > "$file.new"
  mv "$file.new" "$file"
  echo "kvs-secret: $file from KVS_PASSWORD"
elif [ -s "$file" ]; then
  echo "kvs-secret: keeping the password in $file"
else
  printf '%s\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$file.new"
  mv "$file.new" "$file"
  echo "kvs-secret: generated a password into $file"
fi
# Readable by the nodes' and James's non-root users (uid 10001); the volume is the rig's only.
chmod 0444 "$file"
