#!/usr/bin/env bash
# Two hosts on this machine: two network namespaces joined by one veth pair,
# an address on each end, the link shaped by tc (tbf: a rate each way; netem:
# a delay, where the kernel has it). The tests in tests/netns/ and the benchmark bench/two_hosts_bench.py
# use it; so can a person trying accum-run --nnodes 2 across a real (if
# simulated) network. Needs root (CAP_NET_ADMIN) and iproute2's ip and tc.
#
#   two-hosts.sh check
#       exit 0 when namespaces can be made here; else says why, exit 77
#   two-hosts.sh with [--name N] [--rate R] [--delay D] -- COMMAND …
#       makes hosts N (default: th<pid>), runs COMMAND with
#         TWO_HOSTS_NAME  TWO_HOSTS_NS0 TWO_HOSTS_NS1   (namespaces: ip netns exec …)
#         TWO_HOSTS_ADDR0 TWO_HOSTS_ADDR1               (host 0's and host 1's address)
#         TWO_HOSTS_IF                                  (the link's name on both hosts: GLOO_SOCKET_IFNAME)
#         TWO_HOSTS_SCRIPT                              (this script, for the commands below)
#       then removes every process in the namespaces, the namespaces and the
#       link — also on SIGINT/SIGTERM/SIGHUP — checks that none is left, and
#       exits with COMMAND's code (1 when something was left behind)
#   two-hosts.sh up N [--rate R] [--delay D]      make hosts N (no cleanup: pair with down)
#   two-hosts.sh down N                           end their processes, remove them
#   two-hosts.sh shape N RATE DELAY               RATE like 1gbit or none (unshaped); DELAY like 100us or 0
#   two-hosts.sh link N up|down                   the link, on host 1's side
#   two-hosts.sh partition N on|off               every packet dropped both ways (the link stays up)
#   two-hosts.sh leftovers [N]                    lists what is left of N (or of every th* set); exit 1 if any
#
# Addresses: 10.233.33.1 (host 0) and 10.233.33.2 (host 1), /30, on a link
# that exists only between the two namespaces: every pair of hosts has its own
# network stacks, so several pairs run at once without meeting, and no packet
# reaches this machine's own interfaces or beyond. Names are short (an
# interface name has at most 15 characters): N-0, N-1 the namespaces, "eth-th"
# the link inside them.
set -uo pipefail

ADDR0=10.233.33.1
ADDR1=10.233.33.2
LINK_IF=eth-th
SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"

say() { echo "two-hosts: $*" >&2; }

can_make() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "network namespaces need root (CAP_NET_ADMIN); this is uid $(id -u)"
    return 1
  fi
  for tool in ip tc; do
    command -v "$tool" >/dev/null || { echo "$tool (iproute2) is not installed"; return 1; }
  done
  local probe="thprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "'ip netns add' is refused here (no namespaces in this sandbox)"
    return 1
  fi
  local ok=1 why=""
  if ! ip -n "$probe" link add name tha type veth peer name thb 2>/dev/null; then
    ok=0; why="veth pairs cannot be made here"
  elif ! ip netns exec "$probe" tc qdisc add dev tha root tbf rate 1gbit burst 131072 limit 1048576 2>/dev/null; then
    ok=0; why="tc cannot shape a link here (no tbf qdisc)"
  fi
  ip netns del "$probe" 2>/dev/null
  [[ $ok == 1 ]] || { echo "$why"; return 1; }
}

valid_name() {
  [[ "$1" =~ ^[a-z][a-z0-9]{0,10}$ ]] || { say "name '$1': 1 to 11 lower-case letters and digits, starting with a letter"; exit 2; }
}

# One end's egress: RATE through tbf (none/0 = unshaped), DELAY through netem
# (0 = none; netem is a kernel module that some kernels lack: then only 0 works).
# tbf's bucket: 2 ms of the rate, at least 128 KiB (veth hands tbf segments of
# up to 64 KiB, and a bucket smaller than one never lets it through); its
# queue: 500 ms of the rate, so that a window's all-reduce queues rather than drops.
shape_end() { # ns rate delay
  local ns=$1 rate=$2 delay=$3
  ip netns exec "$ns" tc qdisc del dev "$LINK_IF" root 2>/dev/null
  local shaped=0 parent=(root)
  if [[ "$delay" != 0 && -n "$delay" ]]; then
    ip netns exec "$ns" tc qdisc add dev "$LINK_IF" root handle 1: netem delay "$delay" limit 100000 ||
      { say "tc: no netem here (delay $delay cannot be set; rates can)"; return 1; }
    parent=(parent 1:1); shaped=1
  fi
  if [[ "$rate" != none && "$rate" != 0 && -n "$rate" ]]; then
    local bps
    bps=$(rate_bits "$rate") || { say "rate '$rate': a number with kbit, mbit or gbit (e.g. 100mbit, 1gbit)"; return 2; }
    local burst=$((bps / 8 / 500)) limit=$((bps / 8 / 2))
    ((burst < 131072)) && burst=131072
    ((limit < 4 * burst)) && limit=$((4 * burst))
    ip netns exec "$ns" tc qdisc add dev "$LINK_IF" "${parent[@]}" handle 10: tbf rate "$rate" burst "$burst" limit "$limit" || return 1
  fi
  return 0
}

# 100mbit → 100000000 (what tc takes: kbit, mbit, gbit, bit)
rate_bits() {
  [[ "$1" =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || return 1
  local n=${BASH_REMATCH[1]}
  case "${BASH_REMATCH[2]}" in bit) echo "$n" ;; kbit) echo $((n * 1000)) ;; mbit) echo $((n * 1000000)) ;; gbit) echo $((n * 1000000000)) ;; esac
}

cmd_shape() { # N rate delay
  valid_name "$1"
  shape_end "$1-0" "$2" "$3" && shape_end "$1-1" "$2" "$3" || { say "tc refused rate '$2' delay '$3'"; return 2; }
}

cmd_up() { # N [--rate R] [--delay D]
  local n=$1 rate=none delay=0
  shift
  valid_name "$n"
  while (($#)); do
    case "$1" in
      --rate) rate=${2:?--rate needs a value, e.g. 1gbit}; shift 2 ;;
      --delay) delay=${2:?--delay needs a value, e.g. 100us}; shift 2 ;;
      *) say "up: unknown option '$1'"; return 2 ;;
    esac
  done
  if ip netns list | grep -qE "^$n-[01]( |$)"; then say "hosts $n exist already"; return 2; fi
  ip netns add "$n-0" && ip netns add "$n-1" &&
    ip -n "$n-0" link add name "$LINK_IF" type veth peer name "$LINK_IF" netns "$n-1" &&
    ip -n "$n-0" addr add "$ADDR0/30" dev "$LINK_IF" &&
    ip -n "$n-1" addr add "$ADDR1/30" dev "$LINK_IF" &&
    ip -n "$n-0" link set lo up && ip -n "$n-1" link set lo up &&
    ip -n "$n-0" link set "$LINK_IF" up && ip -n "$n-1" link set "$LINK_IF" up &&
    cmd_shape "$n" "$rate" "$delay" || { say "could not make hosts $n"; cmd_down "$n"; return 1; }
}

# Every process in the namespace: SIGTERM, then SIGKILL after 3 s.
end_processes() { # ns
  local ns=$1 pids
  pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
  [[ -z "${pids// /}" ]] && return 0
  kill -TERM $pids 2>/dev/null
  for _ in $(seq 30); do
    pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
    [[ -z "${pids// /}" ]] && return 0
    sleep 0.1
  done
  kill -KILL $pids 2>/dev/null
  sleep 0.2
}

cmd_down() { # N
  valid_name "$1"
  local ns
  for ns in "$1-0" "$1-1"; do
    ip netns list | grep -qE "^$ns( |$)" || continue
    end_processes "$ns"
    ip netns del "$ns" 2>/dev/null || say "could not remove namespace $ns"
  done
}

cmd_leftovers() { # [N]
  local pattern="${1:-th[a-z0-9]*}" left=0 out
  out=$(ip netns list | grep -E "^$pattern-[01]( |$)")
  [[ -n "$out" ]] && { say "namespaces left: $(echo "$out" | tr '\n' ' ')"; left=1; }
  # The link lives only inside the namespaces; one in this namespace would be a leak.
  out=$(ip -o link show | grep -E ": ($LINK_IF|$pattern-[01])[@:]")
  [[ -n "$out" ]] && { say "links left in this namespace: $out"; left=1; }
  return $left
}

cmd_link() { # N up|down
  valid_name "$1"
  [[ "$2" == up || "$2" == down ]] || { say "link: up or down, not '$2'"; return 2; }
  ip -n "$1-1" link set "$LINK_IF" "$2"
}

# A partition: each host's route to the other becomes a blackhole (more
# specific than the link's /30), so every packet either sends is dropped
# silently while the link stays up, as 100 % loss would (tc netem's loss where
# the kernel has netem; routes work everywhere).
cmd_partition() { # N on|off
  valid_name "$1"
  case "$2" in
    on) ip -n "$1-0" route add blackhole "$ADDR1/32" && ip -n "$1-1" route add blackhole "$ADDR0/32" ;;
    off) ip -n "$1-0" route del blackhole "$ADDR1/32" 2>/dev/null; ip -n "$1-1" route del blackhole "$ADDR0/32" 2>/dev/null; return 0 ;;
    *) say "partition: on or off, not '$2'"; return 2 ;;
  esac
}

cmd_with() {
  local n="th$$" up_args=()
  while (($#)); do
    case "$1" in
      --name) n=$2; shift 2 ;;
      --rate|--delay) up_args+=("$1" "$2"); shift 2 ;;
      --) shift; break ;;
      *) say "with: unknown option '$1' (the command goes after --)"; return 2 ;;
    esac
  done
  (($#)) || { say "with: no command after --"; return 2; }
  valid_name "$n"
  local why
  if ! why=$(can_make); then say "skipped: $why"; return 77; fi
  local child=0 code=0
  cleanup() {
    trap - INT TERM HUP EXIT
    if ((child)) && kill -0 "$child" 2>/dev/null; then
      kill -TERM "$child" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$child" 2>/dev/null
    fi
    cmd_down "$n"
    if ! cmd_leftovers "$n"; then say "hosts $n were not all removed"; code=1; fi
  }
  trap 'say "interrupted: removing hosts $n"; code=130; cleanup; exit 130' INT TERM HUP
  trap 'cleanup' EXIT
  cmd_up "$n" "${up_args[@]}" || { code=1; exit 1; }
  TWO_HOSTS_NAME="$n" TWO_HOSTS_NS0="$n-0" TWO_HOSTS_NS1="$n-1" TWO_HOSTS_ADDR0=$ADDR0 TWO_HOSTS_ADDR1=$ADDR1 \
    TWO_HOSTS_IF=$LINK_IF TWO_HOSTS_SCRIPT="$SELF" "$@" &
  child=$!
  wait "$child"
  code=$?
  cleanup
  trap - EXIT
  exit "$code"
}

case "${1:-}" in
  check) if why=$(can_make); then exit 0; else say "cannot make hosts: $why"; exit 77; fi ;;
  with) shift; cmd_with "$@" ;;
  up) shift; cmd_up "$@" ;;
  down) shift; cmd_down "$@" ;;
  shape) shift; (($# == 3)) || { say "shape N RATE DELAY"; exit 2; }; cmd_shape "$@" ;;
  link) shift; (($# == 2)) || { say "link N up|down"; exit 2; }; cmd_link "$@" ;;
  partition) shift; (($# == 2)) || { say "partition N on|off"; exit 2; }; cmd_partition "$@" ;;
  leftovers) shift; cmd_leftovers "$@" ;;
  *) sed -n '2,/^set -uo/p' "$SELF" | sed '$d' | sed 's/^# \{0,1\}//'; [[ -z "${1:-}" ]] && exit 2; say "unknown command '$1'"; exit 2 ;;
esac
# SPDX-License-Identifier: GPL-3.0-or-later
