#!/bin/sh
# Starts James (KvsMemoryJamesServerMain) in the container from the SAME configuration files as the
# process rig: james-conf/ of the repository, mounted read-only at $JAMES_CONF_SOURCE by
# docker-compose.yml (a copy is baked into the image as a fallback).
#
# Each start copies that directory to $JAMES_HOME/conf and changes only the values a container needs
# (james-conf binds and relays on 127.0.0.1, which inside a container is the container itself):
#
#   file                  key                      container value (environment variable)
#   smtpserver.xml        <bind> host              0.0.0.0 (port kept)
#   smtpserver.xml        <authorizedAddresses>    $JAMES_RELAY_NETWORKS
#   webadmin.properties   host                     0.0.0.0 (port kept), for Prometheus and the host
#   mailetcontainer.xml   <gateway>/<gatewayPort>  $SINK_HOST / $SINK_PORT
#   dnsservice.xml        <server>                 $JAMES_DNS_SERVER (Docker's DNS, to resolve $SINK_HOST)
#   kvs-spool.properties  servers                  $KVS_SERVERS
#   kvs-spool.properties  password                 first line of $KVS_PASSWORD_FILE (james-conf ships
#                                                  none; docker-compose.yml's kvs-secret service writes
#                                                  the rig's; never printed)
#   kvs-spool.properties  replication.nodes/node.* the nodes of $KVS_SERVERS as kvs1..kvsN (every
#                                                  queue on two of them, as in the process rig)
#   webadmin.properties   extensions.routes        + org.apache.james.webadmin.dropwizard.MetricsRoutes,
#                                                  i.e. GET /metrics for Prometheus (added only when
#                                                  james-conf does not list it already)
#
# Every change is checked: if james-conf/ no longer has the expected element the container stops with
# a message instead of running with a loopback setting. Everything else (queues, retries, mailets) is
# used as is. "entrypoint.sh --prepare-only" writes the configuration and exits.
set -eu

JAMES_HOME="${JAMES_HOME:-/opt/james}"
JAMES_CONF_SOURCE="${JAMES_CONF_SOURCE:-$JAMES_HOME/conf-source}"
KVS_SERVERS="${KVS_SERVERS:-kvs1:7400,kvs2:7400,kvs3:7400}"
SINK_HOST="${SINK_HOST:-sink}"
SINK_PORT="${SINK_PORT:-2526}"
KVS_PASSWORD_FILE="${KVS_PASSWORD_FILE:-/run/kvs-secret/password}"
# 127.0.0.11 is the resolver Docker provides on user-defined networks (compose always creates one).
JAMES_DNS_SERVER="${JAMES_DNS_SERVER:-127.0.0.11}"
# Clients that may relay without SMTP AUTH: the private ranges Docker networks are taken from. Port
# 2525 is published on the host's loopback only (docker-compose.yml), so this is no open relay.
JAMES_RELAY_NETWORKS="${JAMES_RELAY_NETWORKS:-127.0.0.0/8, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16}"
JAMES_JAVA_OPTS="${JAMES_JAVA_OPTS:--Xmx768m}"

conf="$JAMES_HOME/conf"
[ -f "$JAMES_CONF_SOURCE/kvs-spool.properties" ] || {
  echo "entrypoint: $JAMES_CONF_SOURCE has no kvs-spool.properties (mount the repository's james-conf/ there)" >&2
  exit 1
}
rm -rf "$conf"
mkdir -p "$conf" "$JAMES_HOME/var"
cp -R "$JAMES_CONF_SOURCE"/. "$conf"/

# override FILE SED-SCRIPT EXPECTED: edits conf/FILE and checks that it now contains EXPECTED.
override() {
  sed -i "$2" "$conf/$1"
  if ! grep -qF -- "$3" "$conf/$1"; then
    echo "entrypoint: could not set '$3' in $1: has james-conf/$1 changed? (see docker/james/entrypoint.sh)" >&2
    exit 1
  fi
  echo "entrypoint: $1: $3"
}
override smtpserver.xml 's#<bind>[^<]*:\([0-9][0-9]*\)</bind>#<bind>0.0.0.0:\1</bind>#' '<bind>0.0.0.0:'
override smtpserver.xml "s#<authorizedAddresses>[^<]*</authorizedAddresses>#<authorizedAddresses>$JAMES_RELAY_NETWORKS</authorizedAddresses>#" \
  "<authorizedAddresses>$JAMES_RELAY_NETWORKS</authorizedAddresses>"
override webadmin.properties 's#^host=.*#host=0.0.0.0#' 'host=0.0.0.0'
override mailetcontainer.xml "s#<gateway>[^<]*</gateway>#<gateway>$SINK_HOST</gateway>#" "<gateway>$SINK_HOST</gateway>"
override mailetcontainer.xml "s#<gatewayPort>[^<]*</gatewayPort>#<gatewayPort>$SINK_PORT</gatewayPort>#" "<gatewayPort>$SINK_PORT</gatewayPort>"
override dnsservice.xml "s#<server>[^<]*</server>#<server>$JAMES_DNS_SERVER</server>#" "<server>$JAMES_DNS_SERVER</server>"
override kvs-spool.properties "s#^servers=.*#servers=$KVS_SERVERS#" "servers=$KVS_SERVERS"
# The KVS password: replaces james-conf's empty "password=" line (appended, never echoed or passed to sed).
[ -s "$KVS_PASSWORD_FILE" ] || {
  echo "entrypoint: no KVS password in $KVS_PASSWORD_FILE (docker-compose.yml's kvs-secret service writes it)" >&2
  exit 1
}
sed -i '/^password=/d' "$conf/kvs-spool.properties"
printf 'password=%s\n' "$(head -n 1 "$KVS_PASSWORD_FILE")" >> "$conf/kvs-spool.properties"
echo "entrypoint: kvs-spool.properties: password from $KVS_PASSWORD_FILE"
# Replication group = the compose KVS nodes: replace the process rig's loopback node addresses.
sed -i '/^replication\.nodes=/d;/^replication\.node\./d' "$conf/kvs-spool.properties"
names=""
i=0
for hp in $(echo "$KVS_SERVERS" | tr ',' ' '); do
  i=$((i + 1))
  names="${names:+$names,}kvs$i"
  echo "replication.node.kvs$i.active=$hp" >> "$conf/kvs-spool.properties"
done
echo "replication.nodes=$names" >> "$conf/kvs-spool.properties"
echo "entrypoint: kvs-spool.properties: replication.nodes=$names ($KVS_SERVERS)"
# James 3.8.1 serves /metrics (Prometheus format) only when this webadmin route is listed.
metrics_routes=org.apache.james.webadmin.dropwizard.MetricsRoutes
if ! grep -q "^extensions.routes=.*$metrics_routes" "$conf/webadmin.properties"; then
  if grep -q '^extensions.routes=' "$conf/webadmin.properties"; then
    override webadmin.properties "s#^extensions.routes=\(.*\)#extensions.routes=\1,$metrics_routes#" "$metrics_routes"
  else
    printf '\n# Added by docker/james/entrypoint.sh: GET /metrics for Prometheus.\nextensions.routes=%s\n' "$metrics_routes" >> "$conf/webadmin.properties"
    echo "entrypoint: webadmin.properties: extensions.routes=$metrics_routes"
  fi
fi

[ "${1:-}" = "--prepare-only" ] && exit 0

cd "$JAMES_HOME"
# Same command as james-kvs-app/README.md; the plug-in is on the main classpath (hence -cp, not -jar).
# shellcheck disable=SC2086 # JAMES_JAVA_OPTS is a list of options
exec java $JAMES_JAVA_OPTS -cp "$JAMES_HOME/lib/*" \
  -Dworking.directory="$JAMES_HOME" -Dlogback.configurationFile="$conf/logback.xml" \
  org.jameskvs.app.KvsMemoryJamesServerMain "$@"
