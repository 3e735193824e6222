#!/usr/bin/env bash
# A cluster on one machine (docs/cluster.md): N hosts (2-4), each a set of Linux namespaces
# with its own network stack and address (net), host name (UTS), /dev/shm, /etc/hosts,
# /sys and boot id (mount), System V IPC (ipc) and processes (pid), running an sshd, joined
# by veth pairs to a bridge in a "switch" namespace, so that MPICH's hydra and Open MPI
# start ranks on them with their ordinary ssh launcher and hosts file, and the libraries
# talk TCP across the veths as they would across Ethernet. Needs root.
#
#   scripts/cluster.sh up N [--rate RATE] [--delay TIME] [--loss PCT]
#       N hosts cb-host1..cb-hostN (10.242.42.1..N; CB_CLUSTER_NET=A.B.C for another /24);
#       this machine joins as 10.242.42.254 (the launch node). --rate: every host's link
#       limited to RATE each way (tc htb, e.g. 10gbit, 500mbit); --delay/--loss: tc netem,
#       only where the kernel has it (refused, saying so, where it has not). Idempotent: a
#       cluster that is up as asked is kept (a dead host or sshd is started again); one
#       with another size or link is taken down and made again.
#   scripts/cluster.sh down          removes everything up made (also after a crash)
#   scripts/cluster.sh status        hosts, addresses, link shaping, sshd, processes
#   scripts/cluster.sh exec I CMD... runs CMD on host I (its namespaces), not through ssh
#   Faults (scripts/cluster_check.py --faults):
#   scripts/cluster.sh link I down|up     cut host I's link (all traffic dropped) or restore it
#   scripts/cluster.sh sshd I stop|start  stop host I's sshd (a host that never starts)
#   scripts/cluster.sh crash I            every process on host I killed at once
#
# What up makes, all of it removed by down:
#   /run/collbench-cluster/    hosts (the hosts file: CB_HOSTFILE), env (CB_HOSTFILE and
#                              CB_LINE_RATE_GBPS, to source), ssh keys, each host's files
#   network namespaces cb-switch (the bridge) and cb-host1..N; veth cb-head in this one
#   /etc/hosts lines ending "# collbench-cluster"; /etc/ssh/ssh_config.d/collbench-cluster.conf
#   (the key and known hosts for cb-host*, so that plain `ssh cb-host1` works)
set -euo pipefail

STATE=/run/collbench-cluster
NET=${CB_CLUSTER_NET:-10.242.42}
PREFIX=cb-host
SWITCH=cb-switch
HEAD_IF=cb-head
MARK="# collbench-cluster"
SSH_CONF=/etc/ssh/ssh_config.d/collbench-cluster.conf
LOCK=/run/lock/collbench-cluster.lock

say() { echo "cluster: $*"; }
die() {
  echo "cluster: error: $*" >&2
  exit "${2:-1}"
}
usage() {
  sed -n '/^#   scripts/,/^#$/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, mounts, /etc/hosts)" 2
  local t
  for t in ip unshare nsenter tc ssh ssh-keygen; do
    command -v "$t" >/dev/null || die "$t is missing (iproute2, util-linux, openssh-client)" 2
  done
  [ -x /usr/sbin/sshd ] || die "no /usr/sbin/sshd: install openssh-server (scripts/install_deps.sh)" 2
}

our_netns() {  # the network namespaces a cluster made (by name: state files may be gone)
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^(${PREFIX}[0-9]+|${SWITCH})$" || true
}

host_pid() {  # host_pid I: the host's first process (its pid 1) as this namespace sees it
  local f=$STATE/host$1/pid p
  [ -r "$f" ] || return 1
  p=$(cat "$f")
  [ -d "/proc/$p" ] && [ "$(readlink "/proc/$p/ns/net")" = "$(nsenter --net="/run/netns/$PREFIX$1" readlink /proc/self/ns/net 2>/dev/null)" ] &&
    echo "$p"
}

on_host() {  # on_host I CMD...: CMD inside host I's namespaces
  local p
  p=$(host_pid "$1") || die "host $1 is not running (scripts/cluster.sh up)"
  shift
  # with the host's cores (what its first process has)
  nsenter -t "$p" -n -m -u -i -p -- taskset -c "$(taskset -pc "$p" | sed 's/.*: //')" "$@"
}

sshd_running() { on_host "$1" sh -c "[ -s $STATE/host$1/sshd.pid ] && kill -0 \$(cat $STATE/host$1/sshd.pid)" 2>/dev/null; }

close_fds() {  # closes what this shell inherited beyond 0-2: a caller's lock (flock FILE
  # scripts/cluster.sh up ...) must not live on in the hosts' processes
  local f fd
  for f in "/proc/$BASHPID/fd/"*; do
    fd=${f##*/}
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}

start_sshd() {  # start_sshd I
  (close_fds; on_host "$1" taskset -c "$(cat "$STATE/host$1/cpus")" /usr/sbin/sshd -f "$STATE/ssh/sshd_config" -o "ListenAddress=$NET.$1" \
    -o "PidFile=$STATE/host$1/sshd.pid" -E "$STATE/host$1/sshd.log")
}

# --- down: everything up makes, found by name (state files may be gone after a crash) ------
down() {
  local ns p n=0
  for ns in $(our_netns); do
    # every process in the namespace (a host's pid 1 first: that ends all of its processes)
    for p in $(ip netns pids "$ns" 2>/dev/null || true); do kill -9 "$p" 2>/dev/null || true; done
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
      sleep 0.2
    done
    ip netns del "$ns" 2>/dev/null || die "cannot delete network namespace $ns"
    n=$((n + 1))
  done
  # the unshare processes that held a host's mount namespace (outside its pid namespace)
  if [ -d "$STATE" ]; then
    for p in $(cat "$STATE"/host*/holder 2>/dev/null || true); do
      if [ -d "/proc/$p" ] && grep -q unshare "/proc/$p/comm" 2>/dev/null; then kill -9 "$p" 2>/dev/null || true; fi
    done
  fi
  ip link del "$HEAD_IF" 2>/dev/null || true  # gone with cb-switch; after a crash maybe not
  if grep -q "$MARK\$" /etc/hosts; then
    # in place (the same inode: /etc/hosts is a bind mount in many containers)
    local kept
    kept=$(grep -v "$MARK\$" /etc/hosts || true)
    printf '%s\n' "$kept" >/etc/hosts
  fi
  rm -f "$SSH_CONF"
  rm -rf "$STATE"
  say "down: $n namespace(s) removed; no cluster left (/etc/hosts, ssh config, $STATE cleaned)"
}

# --- up -----------------------------------------------------------------------------------
netem_works() {  # can this kernel shape delay and loss? (a throwaway veth in the switch)
  ip -n "$SWITCH" link add cb-probe type veth peer name cb-probe2 2>/dev/null || return 1
  local rc=0
  tc -n "$SWITCH" qdisc add dev cb-probe root netem delay 1ms 2>/dev/null || rc=1
  ip -n "$SWITCH" link del cb-probe 2>/dev/null || true
  return $rc
}

shape() {  # shape NETNS DEV: rate and netem on DEV's egress, as asked
  local ns=$1 dev=$2 netem=()
  [ -n "$DELAY" ] && netem+=(delay "$DELAY")
  [ -n "$LOSS" ] && netem+=(loss "$LOSS%")
  if [ -n "$RATE" ]; then
    tc -n "$ns" qdisc add dev "$dev" root handle 1: htb default 1
    # burst: 1 ms at RATE at least (a 10 Gbit/s link on a 250 Hz timer needs it)
    tc -n "$ns" class add dev "$dev" parent 1: classid 1:1 htb rate "$RATE" ceil "$RATE" \
      burst 256k cburst 256k quantum 65536
    if ((${#netem[@]})); then tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: netem "${netem[@]}"; fi
  elif ((${#netem[@]})); then
    tc -n "$ns" qdisc add dev "$dev" root netem "${netem[@]}"
  fi
}

make_ssh() {
  mkdir -p "$STATE/ssh"
  chmod 700 "$STATE/ssh"
  ssh-keygen -q -t ed25519 -N "" -C collbench-cluster -f "$STATE/ssh/id_ed25519"
  ssh-keygen -q -t ed25519 -N "" -C collbench-cluster-host -f "$STATE/ssh/host_ed25519"
  cp "$STATE/ssh/id_ed25519.pub" "$STATE/ssh/authorized_keys"
  local names=() i
  for ((i = 1; i <= N; i++)); do names+=("$PREFIX$i" "$NET.$i"); done
  echo "$(IFS=,; echo "${names[*]}") $(cut -d' ' -f1-2 "$STATE/ssh/host_ed25519.pub")" \
    >"$STATE/ssh/known_hosts"
  cat >"$STATE/ssh/sshd_config" <<EOF
# collbench cluster host: scripts/cluster.sh (ListenAddress and PidFile per host)
Port 22
HostKey $STATE/ssh/host_ed25519
AuthorizedKeysFile $STATE/ssh/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
X11Forwarding no
UseDNS no
MaxStartups 100:30:200
MaxSessions 100
LogLevel INFO
EOF
  # the client side: plain `ssh cb-host1` (hydra's and Open MPI's ssh launchers) finds the
  # key and trusts the hosts' key, here and on every host (the same /etc/ssh)
  local hosts_pat
  hosts_pat=$(for ((i = 1; i <= N; i++)); do printf '%s ' "$PREFIX$i" "$NET.$i"; done)
  cat >"$SSH_CONF" <<EOF
# collbench cluster (scripts/cluster.sh up; removed by down)
Host ${hosts_pat% }
  User root
  IdentityFile $STATE/ssh/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $STATE/ssh/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
  ServerAliveInterval 5
  ServerAliveCountMax 3
  LogLevel ERROR
EOF
}

host_init() {  # the script each host runs as its pid 1: its mounts, then it reaps orphans
  cat <<'EOF'
set -eu
i=$1 state=$2 name=$3 cpus=$4
hostname "$name"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
mount --bind "$state/etc_hosts" /etc/hosts
mount --bind "$state/host$i/hostname" /etc/hostname
mount --bind "$state/host$i/boot_id" /proc/sys/kernel/random/boot_id
# /sys of this network namespace (/sys/class/net lists eth0 and lo, as on a host)
mount -t sysfs sysfs /sys 2>/dev/null || echo "host $i: /sys not remounted: /sys/class/net shows the machine's" >&2
# its own cores: the first process's affinity (every process of the host inherits it) and
# the online list (sysconf(_SC_NPROCESSORS_ONLN), what the benchmarks' --wait auto counts)
taskset -pc "$cpus" $$ >/dev/null
echo "$cpus" >"$state/host$i/cpus"
mount --bind "$state/host$i/cpus" /sys/devices/system/cpu/online
mkdir -p /run/sshd
echo ready >"$state/host$i/ready"
trap 'exit 0' TERM
while :; do sleep infinity & wait $! || true; done
EOF
}

host_cpus() {  # host_cpus I: host I's share of this machine's cores (at least one; the
  # first hosts' shares wrap around when there are more hosts than cores), e.g. 0 or 2,3
  local all k first
  mapfile -t all < <(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
    awk -F- '{ if (NF == 1) print $1; else for (c = $1; c <= $2; c++) print c }')
  k=$((${#all[@]} / N))
  [ "$k" -ge 1 ] || k=1
  first=$(((($1 - 1) * k) % ${#all[@]}))
  (IFS=,; echo "${all[*]:first:k}")
}

start_host() {  # start_host I: its namespaces (net exists) and first process, then sshd
  local i=$1 d=$STATE/host$1 holder p
  mkdir -p "$d"
  rm -f "$d/ready" "$d/sshd.pid"
  echo "$PREFIX$i" >"$d/hostname"
  cat /proc/sys/kernel/random/uuid >"$d/boot_id"  # hosts differ as real ones do (UCX, ...)
  host_init >"$STATE/host-init.sh"
  local cpus
  cpus=$(host_cpus "$i")
  (close_fds; exec setsid nsenter --net="/run/netns/$PREFIX$i" -- unshare --mount --uts --ipc \
    --pid --fork --mount-proc --propagation private -- bash "$STATE/host-init.sh" "$i" \
    "$STATE" "$PREFIX$i" "$cpus") </dev/null >"$d/init.log" 2>&1 &
  holder=$!
  echo "$holder" >"$d/holder"
  for _ in $(seq 50); do
    [ -e "$d/ready" ] && break
    kill -0 "$holder" 2>/dev/null || die "host $i did not start: $(cat "$d/init.log")"
    sleep 0.1
  done
  [ -e "$d/ready" ] || die "host $i did not start within 5 s: $(cat "$d/init.log")"
  p=$(pgrep -P "$holder" | head -1)
  [ -n "$p" ] || die "host $i: no first process under unshare $holder"
  echo "$p" >"$d/pid"
  start_sshd "$i"
}

wait_ssh() {  # every host answers ssh (the launchers' way in)
  local i t
  for ((i = 1; i <= N; i++)); do
    for t in $(seq 50); do
      if [ "$(ssh "$PREFIX$i" hostname 2>/dev/null)" = "$PREFIX$i" ]; then break; fi
      [ "$t" = 50 ] && die "ssh $PREFIX$i does not answer: $(tail -3 "$STATE/host$i/sshd.log" 2>/dev/null)"
      sleep 0.1
    done
  done
}

up() {
  local want="N=$N RATE=$RATE DELAY=$DELAY LOSS=$LOSS NET=$NET"
  if [ -r "$STATE/config" ] && [ "$(cat "$STATE/config")" = "$want" ]; then
    local i fixed=0
    for ((i = 1; i <= N; i++)); do
      if ! host_pid "$i" >/dev/null; then
        say "host $i was not running: starting it again"
        start_host "$i"
        fixed=1
      elif ! sshd_running "$i"; then
        say "host $i's sshd was not running: starting it"
        start_sshd "$i"
        fixed=1
      fi
    done
    for ((i = 1; i <= N; i++)); do ip -n "$SWITCH" link set "sw-h$i" up; done
    wait_ssh
    [ "$fixed" = 1 ] || say "already up: $N hosts (${RATE:-no rate limit})"
    return 0
  fi
  if [ -e "$STATE" ] || [ -n "$(our_netns)" ]; then
    say "a cluster (or what is left of one) is there: taking it down first"
    down
  fi
  # this machine's networking is left alone: the cluster's /24 must be unused here
  local clash
  clash=$(ip -4 route show | awk '$1 != "default"' | grep -E "^$NET\.|^$NET\.0/" || true)
  [ -z "$clash" ] || die "$NET.0/24 is in use on this machine ($clash): set CB_CLUSTER_NET=A.B.C" 2
  mkdir -p "$STATE"
  trap 'echo "cluster: up failed: taking down what was made" >&2; down >/dev/null 2>&1 || true' ERR
  ip netns add "$SWITCH"
  ip -n "$SWITCH" link set lo up
  ip -n "$SWITCH" link add br0 type bridge
  ip -n "$SWITCH" link set br0 up
  if [ -n "$DELAY$LOSS" ] && ! netem_works; then
    trap - ERR
    down >/dev/null
    die "--delay/--loss need tc netem (sch_netem), which this kernel does not have; only --rate (htb) can shape a link here" 2
  fi
  # the launch node: this machine, on the cluster's network as .254 (unshaped)
  ip link add "$HEAD_IF" type veth peer name sw-head netns "$SWITCH"
  ip -n "$SWITCH" link set sw-head master br0 up
  ip addr add "$NET.254/24" dev "$HEAD_IF"
  ip link set "$HEAD_IF" up
  local i me
  me=$(hostname)
  {
    echo "127.0.0.1 localhost"
    echo "::1 localhost ip6-localhost ip6-loopback"
    for ((i = 1; i <= N; i++)); do echo "$NET.$i $PREFIX$i"; done
    # the launch node by its own names: hydra's proxies and Open MPI's daemons call back
    echo "$NET.254 $me $(hostname -s 2>/dev/null || true) cb-head" | tr -s ' '
  } >"$STATE/etc_hosts"
  : >"$STATE/hosts"
  for ((i = 1; i <= N; i++)); do
    ip netns add "$PREFIX$i"
    ip -n "$PREFIX$i" link set lo up
    ip -n "$SWITCH" link add "sw-h$i" type veth peer name eth0 netns "$PREFIX$i"
    ip -n "$SWITCH" link set "sw-h$i" master br0 up
    ip -n "$PREFIX$i" addr add "$NET.$i/24" dev eth0
    ip -n "$PREFIX$i" link set eth0 up
    shape "$SWITCH" "sw-h$i"  # toward the host
    shape "$PREFIX$i" eth0     # from the host
    echo "$PREFIX$i" >>"$STATE/hosts"
  done
  make_ssh
  for ((i = 1; i <= N; i++)); do start_host "$i"; done
  # /etc/hosts here: the launchers resolve the hosts' names on this machine
  for ((i = 1; i <= N; i++)); do echo "$NET.$i $PREFIX$i $MARK"; done >>/etc/hosts
  {
    echo "# collbench cluster: source this (scripts/cluster.sh up $N${RATE:+ --rate $RATE})"
    echo "export CB_HOSTFILE=$STATE/hosts"
    [ -n "$RATE" ] && echo "export CB_LINE_RATE_GBPS=$(rate_gbps "$RATE")"
  } >"$STATE/env"
  wait_ssh
  echo "$want" >"$STATE/config"
  trap - ERR
  say "up: $N hosts ($(paste -sd' ' "$STATE/hosts")), $NET.0/24, this machine $NET.254;" \
    "links: ${RATE:-not rate-limited}${DELAY:+, delay $DELAY}${LOSS:+, loss $LOSS %}"
  say "hosts file $STATE/hosts; source $STATE/env for CB_HOSTFILE${RATE:+ and CB_LINE_RATE_GBPS}"
  if [ -z "$DELAY$LOSS" ] && ! netem_works; then
    say "note: this kernel has no tc netem: links cannot be given delay or loss (only a rate)"
  fi
}

rate_gbps() {  # rate_gbps 10gbit -> 10; tc's units (bit and byte per second)
  python3 - "$1" <<'EOF'
import re, sys
m = re.fullmatch(r"([0-9.]+)([kmgt]?)(bit|bps)", sys.argv[1].lower())
v = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]
v *= 8 if m.group(3) == "bps" else 1
print(f"{v / 1e9:g}")
EOF
}

status() {
  if [ ! -r "$STATE/config" ]; then
    local left
    left=$(our_netns | paste -sd' ')
    if [ -n "$left" ] || [ -e "$STATE" ] || [ -e "$SSH_CONF" ] || grep -q "$MARK\$" /etc/hosts; then
      say "down, but something is left (${left:-state files}): scripts/cluster.sh down"
      return 1
    fi
    say "down"
    return 3
  fi
  eval "$(sed 's/ /;/g' "$STATE/config")"
  say "up: $(cat "$STATE/config")"
  local i rc=0 q
  for ((i = 1; i <= N; i++)); do
    local state=running sshd=running procs link
    host_pid "$i" >/dev/null || { state="NOT RUNNING"; rc=1; }
    if [ "$state" = running ]; then sshd_running "$i" || { sshd="STOPPED"; rc=1; }; else sshd="-"; fi
    procs=$(ip netns pids "$PREFIX$i" 2>/dev/null | wc -l)
    link=$(ip -n "$SWITCH" -br link show "sw-h$i" 2>/dev/null | awk '{print $2}' || true)
    q=$(tc -n "$SWITCH" class show dev "sw-h$i" 2>/dev/null | grep -o 'rate [^ ]*' | head -1 || true)
    echo "  $PREFIX$i  $NET.$i  host $state (cpus $(cat "$STATE/host$i/cpus" 2>/dev/null || echo ?))," \
      "sshd $sshd, $procs process(es), link ${link:-?}${q:+ ($q)}"
  done
  return $rc
}

# --- faults -------------------------------------------------------------------------------
host_arg() {
  [[ ${1:-} =~ ^[1-9][0-9]*$ ]] && [ -d "$STATE/host$1" ] && return 0
  die "no host '${1:-}' in the cluster (scripts/cluster.sh status)" 2
}

main() {
  local cmd=${1:-}
  [ -n "$cmd" ] || usage
  shift
  case "$cmd" in
    up)
      N=${1:-}
      [[ $N =~ ^[2-4]$ ]] || die "up needs the number of hosts, 2 to 4 (got '${N}')" 2
      shift
      RATE="" DELAY="" LOSS=""
      while [ $# -gt 0 ]; do
        case "$1" in
          --rate) RATE=${2:-}; shift 2 || die "--rate needs a rate" 2
            [[ $RATE =~ ^[0-9]+(\.[0-9]+)?[kmgtKMGT]?(bit|bps)$ ]] ||
              die "--rate takes tc's form, e.g. 10gbit, 500mbit (got '$RATE')" 2 ;;
          --delay) DELAY=${2:-}; shift 2 || die "--delay needs a time" 2
            [[ $DELAY =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]] || die "--delay takes e.g. 100us, 2ms (got '$DELAY')" 2 ;;
          --loss) LOSS=${2:-}; shift 2 || die "--loss needs a percentage" 2
            [[ $LOSS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--loss takes a percentage, e.g. 0.1 (got '$LOSS')" 2 ;;
          *) die "unknown option '$1' for up (--rate, --delay, --loss)" 2 ;;
        esac
      done
      need_root
      up ;;
    down) need_root; down ;;
    status) status ;;
    exec)
      need_root
      host_arg "${1:-}"
      local i=$1
      shift
      [ $# -gt 0 ] || die "exec needs a command" 2
      on_host "$i" "$@" ;;
    link)
      need_root
      host_arg "${1:-}"
      case "${2:-}" in
        down | up) ip -n "$SWITCH" link set "sw-h$1" "$2"; say "host $1's link $2" ;;
        *) die "link I down|up" 2 ;;
      esac ;;
    sshd)
      need_root
      host_arg "${1:-}"
      case "${2:-}" in
        stop)
          if sshd_running "$1"; then on_host "$1" sh -c "kill \$(cat $STATE/host$1/sshd.pid)"; fi
          rm -f "$STATE/host$1/sshd.pid"
          say "host $1's sshd stopped" ;;
        start) sshd_running "$1" || start_sshd "$1"; say "host $1's sshd running" ;;
        *) die "sshd I stop|start" 2 ;;
      esac ;;
    crash)
      need_root
      host_arg "${1:-}"
      local p
      p=$(host_pid "$1") || die "host $1 is not running"
      kill -9 "$p"  # its pid 1: the kernel kills every process of the host with it
      say "host $1 crashed (every process on it killed); scripts/cluster.sh up N starts it again" ;;
    -h | --help | help) usage ;;
    *) die "unknown command '$cmd' (up N, down, status, exec, link, sshd, crash)" 2 ;;
  esac
}

# one cluster command at a time (up and down change the machine)
mkdir -p "$(dirname "$LOCK")"
exec 9>"$LOCK"
flock 9
main "$@"
