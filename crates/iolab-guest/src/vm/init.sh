#!/bin/busybox sh
# /init of iolab's guest (see crates/iolab-guest/src/vm/). Lines starting "IOLAB-VM " on the console are
# read by the host; the commands' stdout and stderr go to the second and third serial ports.
/bin/busybox --install -s /bin
export PATH=/iolab:/bin:/usr/sbin:/usr/bin HOME=/ LC_ALL=C
say() { echo "IOLAB-VM $*"; }
fail() { say "error $*"; sync; poweroff -f; sleep 10; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# --layers traces the block layer in an ftrace instance of its own, under a mounted tracefs.
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm /tmp /run /var/tmp /mnt/host
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
say "booted $(uname -r) $(cut -d' ' -f1 /proc/uptime)"

# Modules in load order; MODULE.PARAM=VALUE words of the kernel command line are passed to insmod (it does
# not read them itself).
for m in $(cat /iolab/modules/order); do
	n=$(echo "${m%.ko}" | tr - _)
	p=""
	for w in $(cat /proc/cmdline); do
		case "$w" in "$n".*=*) p="$p ${w#"$n".}" ;; esac
	done
	out=$(insmod "/iolab/modules/$m" $p 2>&1) || say "module $m: $out"
done

wait_for() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ]
}

# The network card (QEMU's restricted user network): the guest at 10.0.2.15, the host's discard peer
# at 10.0.2.100:9 (--target tcp:10.0.2.100:9).
ip link set lo up
if wait_for /sys/class/net/eth0; then
	ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up || say "warning: eth0 could not be configured"
else
	say "warning: no network card (eth0): --target tcp:10.0.2.100:9 cannot connect"
fi

if [ -e /iolab/iolab_sink.ko ]; then
	if out=$(insmod /iolab/iolab_sink.ko 2>&1); then
		if wait_for /dev/iolab_sink; then
			say "driver loaded"
		else
			say "driver failed: insmod succeeded but /dev/iolab_sink did not appear"
		fi
	else
		say "driver failed: insmod: $out"
	fi
fi

# A board without PCI (vexpress-a9) has no NVMe disk: iolab.nvme=none on the command line.
if grep -qw 'iolab.nvme=none' /proc/cmdline; then
	say "no NVMe disk on this board (no PCI): /dev/nvme0n1 is absent; the virtio disk is on virtio-mmio"
else
	wait_for /dev/nvme0n1 || say "warning: no /dev/nvme0n1 (the NVMe disk)"
fi
if wait_for /dev/vda; then
	if out=$(mke2fs -q -i 262144 /dev/vda 2>&1) && out=$(mount -t ext4 /dev/vda /var/tmp 2>&1); then
		# /tmp is in memory here: what wants a disk's temporary directory (probe's disk tries) gets the disk.
		export TMPDIR=/var/tmp
	else
		say "warning: the virtio disk could not be formatted or mounted ($out): /var/tmp is in memory"
	fi
else
	say "warning: no /dev/vda (the virtio disk): /var/tmp is in memory"
fi
. /iolab/commands
# A guest that only serves ssh (iolab.share=none) has no share of the host's directory.
dir=/
if ! grep -qw 'iolab.share=none' /proc/cmdline; then
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host /mnt/host ||
		fail "the host's directory could not be mounted (9p)"
	# The host's current directory at its own path too, where that path is free here, so that absolute
	# paths into it work as well as relative ones.
	dir=/mnt/host
	if [ "$HOSTDIR" != / ] && [ ! -e "$HOSTDIR" ] && [ ! -L "$HOSTDIR" ]; then
		mkdir -p "$(dirname "$HOSTDIR")" 2>/dev/null && ln -s /mnt/host "$HOSTDIR" 2>/dev/null && dir="$HOSTDIR"
	fi
fi
cd "$dir" || fail "cannot enter the host's directory"

# stdout and stderr reach the host through serial ports (x86: the second and third; arm64's virt machine
# has one UART, the console: virtio serial ports named iolab.out and iolab.err), but through pipes here:
# iolab then sees no terminal and draws no progress bars into them.
port() {
	i=0
	while [ $i -lt 300 ]; do
		for p in /sys/class/virtio-ports/*/name; do
			[ "$(cat "$p" 2>/dev/null)" = "$1" ] || continue
			d=${p%/name}
			wait_for "/dev/${d##*/}" && echo "/dev/${d##*/}" && return 0
		done
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
if grep -q '^virtio_console\.ko' /iolab/modules/order; then
	out=$(port iolab.out) && err=$(port iolab.err) ||
		fail "no virtio serial ports named iolab.out and iolab.err for the command's output"
else
	out=/dev/ttyS1 err=/dev/ttyS2
	stty -F $out raw -echo clocal
	stty -F $err raw -echo clocal
fi
exec 3>"$out" 4>"$err"
mkfifo /run/out /run/err
say "ready $(cut -d' ' -f1 /proc/uptime)"
i=1
while [ $i -le "$NCMD" ]; do
	say "start $i $(cut -d" " -f1 /proc/uptime)"
	cat /run/out >&3 &
	c1=$!
	cat /run/err >&4 &
	c2=$!
	"cmd$i" >/run/out 2>/run/err </dev/null
	rc=$?
	wait $c1 $c2
	say "status $i $rc $(cut -d" " -f1 /proc/uptime)"
	i=$((i + 1))
done
# Closing a serial port waits until its output has gone out.
exec 3>&- 4>&-
# iolab vm --ssh, once the commands are done: the host's directory unmounted (what ssh users run cannot
# reach it), then dropbear on port 22 (QEMU forwards the host's 127.0.0.1:PORT to it), root's key only
# (-s: no passwords), with the host key the host made for this boot; up until the host stops the guest.
if [ -e /iolab/ssh/host_key ]; then
	cd /
	if [ "$dir" = "$HOSTDIR" ] && [ -L "$HOSTDIR" ]; then rm -f "$HOSTDIR"; fi
	if grep -q ' /mnt/host ' /proc/mounts && ! umount /mnt/host; then
		fail "ssh: the host's directory could not be unmounted before serving"
	fi
	mkdir -p /etc/dropbear /root /dev/pts
	# Ansible's ssh asks for a terminal (-tt): dropbear needs the pseudo-terminals' filesystem.
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts ||
		say "warning: devpts could not be mounted: no terminals for ssh sessions"
	hostname iolab-guest
	out=$(dropbearconvert openssh dropbear /iolab/ssh/host_key /etc/dropbear/host_key 2>&1) ||
		fail "ssh: the host key could not be converted: $out"
	dropbear -s -p 22 -r /etc/dropbear/host_key -P /run/dropbear.pid 2>/run/dropbear.log ||
		fail "ssh: dropbear did not start: $(tail -n 3 /run/dropbear.log)"
	say "ssh started"
	while :; do sleep 3600; done
fi
cd /
sync
umount /mnt/host 2>/dev/null
umount /var/tmp 2>/dev/null
say "done $(cut -d" " -f1 /proc/uptime)"
poweroff -f
