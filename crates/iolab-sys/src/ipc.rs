//! Descriptors and words that threads and processes signal each other through: pipes, sockets (a UNIX pair,
//! a loopback TCP pair), O_NONBLOCK, epoll and poll, eventfd, futexes, and vectored I/O at the stream
//! position.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::errno::{result, SysErr, SysResult};
use super::files::write;

/// pipe2(2) with O_CLOEXEC: (read end, write end).
pub fn pipe() -> SysResult<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
    result("pipe2", unsafe {
        libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned two new descriptors nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// fcntl(F_SETPIPE_SZ): asks for a pipe of `size` bytes; returns the size the kernel gave.
pub fn set_pipe_size(fd: RawFd, size: usize) -> SysResult<usize> {
    // SAFETY: F_SETPIPE_SZ takes an integer argument.
    result("fcntl(F_SETPIPE_SZ)", unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, size as libc::c_int)
    })
    .map(|v| v as usize)
}

/// eventfd2(2) with EFD_CLOEXEC (and `flags`, e.g. EFD_NONBLOCK).
pub fn eventfd(flags: libc::c_int) -> SysResult<OwnedFd> {
    // SAFETY: eventfd takes an initial value and flags; no pointers.
    let fd = result("eventfd2", unsafe {
        libc::eventfd(0, flags | libc::EFD_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Adds 1 to an eventfd's counter (a doorbell): one write(2) of 8 bytes.
pub fn eventfd_ring(fd: RawFd) -> SysResult<()> {
    let one = 1u64.to_ne_bytes();
    write(fd, &one).map(|_| ())
}

/// FUTEX_WAIT_PRIVATE: sleeps while `word` holds `expected` (returns at once if it does not).
/// EAGAIN (the value changed) and EINTR are normal returns for a caller that re-checks its condition.
pub fn futex_wait(word: &std::sync::atomic::AtomicU32, expected: u32) -> SysResult<()> {
    // SAFETY: `word` is a live, aligned u32 for the duration of the call; the timeout is null (no pointer
    // read), the other arguments are unused by FUTEX_WAIT.
    let r = result("futex(FUTEX_WAIT)", unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    });
    match r {
        Err(e) if e.errno != libc::EAGAIN && e.errno != libc::EINTR => Err(e),
        _ => Ok(()),
    }
}

/// FUTEX_WAKE_PRIVATE of up to `n` waiters on `word`.
pub fn futex_wake(word: &std::sync::atomic::AtomicU32, n: u32) -> SysResult<u32> {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE reads no other pointer.
    result("futex(FUTEX_WAKE)", unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        )
    })
    .map(|woken| woken as u32)
}

/// FUTEX_WAIT on a word in memory shared with other processes (not private): sleeps while `word` holds
/// `expected`, at most `timeout`. EAGAIN (the value changed), EINTR and ETIMEDOUT are normal returns for
/// a caller that re-checks its condition.
pub fn futex_wait_shared(
    word: &std::sync::atomic::AtomicU32,
    expected: u32,
    timeout: std::time::Duration,
) -> SysResult<()> {
    // The field types differ by C library and architecture (time_t is 32-bit on armv7 glibc): let the
    // compiler take them from libc's struct rather than naming them.
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    ts.tv_sec = timeout.as_secs().min(i32::MAX as u64) as _;
    ts.tv_nsec = timeout.subsec_nanos() as _;
    // SAFETY: `word` is a live, aligned u32 and `ts` a valid timespec, both for the duration of the call.
    let r = result("futex(FUTEX_WAIT)", unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
        )
    });
    match r {
        Err(e) if ![libc::EAGAIN, libc::EINTR, libc::ETIMEDOUT].contains(&e.errno) => Err(e),
        _ => Ok(()),
    }
}

/// FUTEX_WAKE of up to `n` waiters, in any process, on a word in shared memory.
pub fn futex_wake_shared(word: &std::sync::atomic::AtomicU32, n: u32) -> SysResult<u32> {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE reads no other pointer.
    result("futex(FUTEX_WAKE)", unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, n)
    })
    .map(|woken| woken as u32)
}

/// socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC).
pub fn socketpair_stream() -> SysResult<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
    result("socketpair", unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    })?;
    // SAFETY: the kernel just returned two new descriptors nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn loopback(port: u16) -> libc::sockaddr_in {
    inet(std::net::SocketAddrV4::new([127, 0, 0, 1].into(), port))
}

fn inet(a: std::net::SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// A TCP connection to `to` (blocking connect), with TCP_NODELAY as on iolab's loopback pairs, and
/// TCP_USER_TIMEOUT `stall_ms`: the kernel aborts the connection (ETIMEDOUT in the pending call) when what
/// it sent stays unacknowledged that long, a closed receive window included (a peer that stopped reading).
pub fn tcp_connect(to: std::net::SocketAddrV4, stall_ms: u32) -> SysResult<OwnedFd> {
    // SAFETY: socket takes no pointers.
    let fd = result("socket", unsafe {
        libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0)
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let addr = inet(to);
    // SAFETY: `addr` is a valid sockaddr_in of the stated size.
    result("connect", unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })?;
    for (opt, name, v) in [
        (libc::TCP_NODELAY, "setsockopt(TCP_NODELAY)", 1),
        (
            libc::TCP_USER_TIMEOUT,
            "setsockopt(TCP_USER_TIMEOUT)",
            stall_ms as libc::c_int,
        ),
    ] {
        // SAFETY: `v` is a valid c_int of the stated size.
        result(name, unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::IPPROTO_TCP,
                opt,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        })?;
    }
    Ok(fd)
}

/// What a TCP socket's sender side stands at (TCP_INFO): what the peer acknowledged, counted from the
/// connection's start (the SYN counts one, a FIN another), what is sent and not yet acknowledged, what is
/// not yet sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSent {
    pub bytes_acked: u64,
    pub unacked_segs: u32,
    pub notsent_bytes: u32,
    /// The connection is gone (tcpi_state TCP_CLOSE: reset, or timed out): nothing more will be
    /// acknowledged.
    pub closed: bool,
}

/// TCP_INFO of `fd`, read as the kernel lays out `struct tcp_info` (include/uapi/linux/tcp.h; libc's
/// struct differs between glibc and musl): tcpi_unacked at byte 24, tcpi_bytes_acked at 120 (Linux 4.1+),
/// tcpi_notsent_bytes at 144 (4.6+). Err(ENODATA) where the kernel's struct is shorter than that.
pub fn tcp_sent(fd: RawFd) -> SysResult<TcpSent> {
    let mut buf = [0u8; 232];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` holds `len` writable bytes, and `len` is a valid socklen_t for the kernel to update.
    result("getsockopt(TCP_INFO)", unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    })?;
    if (len as usize) < 148 {
        return Err(SysErr::new("getsockopt(TCP_INFO)", libc::ENODATA));
    }
    let u32_at = |o: usize| u32::from_ne_bytes(buf[o..o + 4].try_into().expect("4 bytes"));
    Ok(TcpSent {
        bytes_acked: u64::from_ne_bytes(buf[120..128].try_into().expect("8 bytes")),
        unacked_segs: u32_at(24),
        notsent_bytes: u32_at(144),
        // tcpi_state, byte 0; TCP_CLOSE is 7 (include/net/tcp_states.h).
        closed: buf[0] == 7,
    })
}

/// A connected TCP pair over 127.0.0.1 (an ephemeral port, listener closed afterwards), with
/// TCP_NODELAY on both ends so small writes are not held back by Nagle's algorithm: (accepted, connected).
pub fn tcp_loopback_pair() -> SysResult<(OwnedFd, OwnedFd)> {
    let sock = |call| -> SysResult<OwnedFd> {
        // SAFETY: socket takes no pointers.
        let fd = result(call, unsafe {
            libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0)
        })?;
        // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let salen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let listener = sock("socket")?;
    let mut addr = loopback(0);
    // SAFETY: `addr` is a valid sockaddr_in of `salen` bytes.
    result("bind(127.0.0.1)", unsafe {
        libc::bind(
            listener.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            salen,
        )
    })?;
    // SAFETY: listen takes no pointers.
    result("listen", unsafe { libc::listen(listener.as_raw_fd(), 1) })?;
    let mut len = salen;
    // SAFETY: `addr` and `len` are valid for the kernel to fill with the bound address.
    result("getsockname", unsafe {
        libc::getsockname(
            listener.as_raw_fd(),
            (&mut addr as *mut libc::sockaddr_in).cast(),
            &mut len,
        )
    })?;
    let client = sock("socket")?;
    // SAFETY: `addr` is the listener's valid sockaddr_in; connect to a listening loopback socket completes
    // without the accept (the backlog holds it).
    result("connect(127.0.0.1)", unsafe {
        libc::connect(
            client.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            salen,
        )
    })?;
    // SAFETY: null address pointers are allowed: the peer address is not wanted.
    let a = result("accept4", unsafe {
        libc::accept4(
            listener.as_raw_fd(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_CLOEXEC,
        )
    })?;
    // SAFETY: the kernel just returned `a` as a new descriptor that nothing else owns.
    let accepted = unsafe { OwnedFd::from_raw_fd(a) };
    for fd in [&accepted, &client] {
        let one: libc::c_int = 1;
        // SAFETY: `one` is a valid c_int of the stated size.
        result("setsockopt(TCP_NODELAY)", unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        })?;
    }
    Ok((accepted, client))
}

/// Sets or clears O_NONBLOCK on `fd`.
pub fn set_nonblocking(fd: RawFd, on: bool) -> SysResult<()> {
    // SAFETY: F_GETFL takes no argument.
    let fl = result("fcntl(F_GETFL)", unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    let fl = if on {
        fl | libc::O_NONBLOCK
    } else {
        fl & !libc::O_NONBLOCK
    };
    // SAFETY: F_SETFL takes an integer argument.
    result("fcntl(F_SETFL)", unsafe {
        libc::fcntl(fd, libc::F_SETFL, fl)
    })
    .map(|_| ())
}

/// epoll_create1(EPOLL_CLOEXEC).
pub fn epoll_create() -> SysResult<OwnedFd> {
    // SAFETY: epoll_create1 takes only flags.
    let fd = result("epoll_create1", unsafe {
        libc::epoll_create1(libc::EPOLL_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// epoll_ctl(EPOLL_CTL_ADD) of `fd` for `events`, with `fd` as the event's data.
pub fn epoll_add(ep: RawFd, fd: RawFd, events: u32) -> SysResult<()> {
    let mut ev = libc::epoll_event {
        events,
        u64: fd as u64,
    };
    // SAFETY: `ev` is a valid epoll_event for the duration of the call.
    result("epoll_ctl(ADD)", unsafe {
        libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev)
    })
    .map(|_| ())
}

/// epoll_wait(2) for up to `evs.len()` events, blocking without timeout; EINTR returns 0 events.
pub fn epoll_wait(ep: RawFd, evs: &mut [libc::epoll_event]) -> SysResult<usize> {
    // SAFETY: `evs` is a valid writable array of `evs.len()` events.
    let r = result("epoll_wait", unsafe {
        libc::epoll_wait(ep, evs.as_mut_ptr(), evs.len() as libc::c_int, -1)
    });
    match r {
        Ok(n) => Ok(n as usize),
        Err(e) if e.errno == libc::EINTR => Ok(0),
        Err(e) => Err(e),
    }
}

/// writev(2) at the stream position (pipes and sockets have no offsets).
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is readable for its whole length during the call.
#[inline]
pub unsafe fn writev(fd: RawFd, iov: &[libc::iovec]) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is readable; the array itself is a valid slice.
    result("writev", unsafe {
        libc::writev(fd, iov.as_ptr(), iov.len() as libc::c_int)
    })
    .map(|n| n as usize)
}

/// readv(2) at the stream position.
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is writable for its whole length during the call and
/// that nothing else accesses meanwhile.
#[inline]
pub unsafe fn readv(fd: RawFd, iov: &[libc::iovec]) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is writable and unaliased; the array is a valid slice.
    result("readv", unsafe {
        libc::readv(fd, iov.as_ptr(), iov.len() as libc::c_int)
    })
    .map(|n| n as usize)
}

/// poll(2) of one descriptor for input, `timeout_ms` at most: true when readable or hung up.
pub fn poll_in(fd: RawFd, timeout_ms: i32) -> SysResult<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd for the duration of the call.
    match result("poll", unsafe { libc::poll(&mut p, 1, timeout_ms) }) {
        Ok(ready) => Ok(ready > 0),
        Err(e) if e.errno == libc::EINTR => Ok(false),
        Err(e) => Err(e),
    }
}
