#!/bin/sh
# Forms the Redis Cluster of docker-compose.cluster.yml once: `redis-cli --cluster create` over
# the nodes in REDIS_NODES (host:port, space-separated), one replica per master. Run by the
# one-shot `redis-init` service after every node answers PING; run again (every `docker compose
# up`) it changes nothing: a first node that already knows other nodes is a formed cluster.
# Growing, shrinking and repairing the cluster are by hand (docs/OPERATIONS.md, Runbook).
#
# REDIS_REPLICAS (default 1) replicas per master; REDISCLI_AUTH, if set, is the nodes' password
# (redis-cli reads it from the environment).
set -eu

nodes=${REDIS_NODES:?REDIS_NODES names the nodes, host:port separated by spaces}
replicas=${REDIS_REPLICAS:-1}
first=${nodes%% *}
host=${first%:*}
port=${first##*:}

known=$(redis-cli -h "$host" -p "$port" cluster info | tr -d '\r' | sed -n 's/^cluster_known_nodes://p')
if [ "${known:-1}" != "1" ]; then
    echo "cluster-init: $first already knows $known nodes: the cluster is formed, nothing to do"
    redis-cli -h "$host" -p "$port" cluster info | tr -d '\r' | grep '^cluster_state:'
    exit 0
fi

echo "cluster-init: creating a cluster of $nodes with $replicas replica(s) per master"
# shellcheck disable=SC2086  # one argument per node
redis-cli --cluster create $nodes --cluster-replicas "$replicas" --cluster-yes

# the first node sees the whole cluster (its state ok, every replica as one) before the servers
# start: they list a few nodes and learn the rest from them
count=$(echo "$nodes" | wc -w)
want=$((count - count / (replicas + 1)))
tries=0
while :; do
    state=$(redis-cli -h "$host" -p "$port" cluster info | tr -d '\r' | grep -c '^cluster_state:ok' || true)
    seen=$(redis-cli -h "$host" -p "$port" cluster nodes | grep -cE ' (myself,)?slave ' || true)
    if [ "$state" = "1" ] && [ "$seen" = "$want" ]; then
        break
    fi
    tries=$((tries + 1))
    if [ "$tries" -gt 60 ]; then
        echo "cluster-init: after 60 s the cluster is not ok or shows $seen of $want replicas" >&2
        exit 1
    fi
    sleep 1
done
echo "cluster-init: cluster_state:ok, $want replicas"
