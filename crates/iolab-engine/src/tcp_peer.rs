//! A TCP peer that iolab does not run (`--target tcp:ADDR:PORT`): its address, how long a run waits for
//! it, and what a connection's errno means in words. Below the targets and the errors, which both speak
//! of it.

use std::net::SocketAddrV4;
use std::path::Path;

/// The peer's address of a TCP target whose peer iolab does not run (`tcp:ADDR:PORT`, an IPv4 address),
/// if `path` names one; Err says what is wrong with it.
pub fn tcp_remote(path: &Path) -> Option<Result<SocketAddrV4, String>> {
    let s = path.to_str()?;
    let addr = s.strip_prefix("tcp:")?;
    let bad = || {
        format!(
            "{s}: a remote TCP peer is tcp:ADDR:PORT with an IPv4 address and a port (tcp:10.0.2.100:9), \
             or plain tcp for a peer of iolab's over 127.0.0.1"
        )
    };
    Some(match parse_v4(addr) {
        Some(a) if a.port() == 0 || a.ip().is_unspecified() => Err(format!(
            "{}: port 0 and address 0.0.0.0 name no peer to connect to",
            bad()
        )),
        Some(a) => Ok(a),
        None => Err(bad()),
    })
}

/// How long the end of a run waits for a remote peer to acknowledge what was sent (also the connection's
/// TCP_USER_TIMEOUT).
pub const REMOTE_ACK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What an errno from a connection to a remote TCP peer at `to` means, in words: the kernel's names for
/// them (ETIMEDOUT, EPIPE ...) say nothing of what the peer or the network did.
pub fn tcp_failure(errno: i32, to: &str) -> Option<String> {
    let wait = REMOTE_ACK_WAIT.as_secs();
    Some(match errno {
        libc::ETIMEDOUT => format!(
            "the peer at {to} stopped taking data (it no longer reads, or the network lost the path to it): \
             nothing sent was taken for over {wait} s, so the kernel gave the connection up"
        ),
        // After the kernel gave a connection up (ETIMEDOUT) a later send sees EPIPE: a peer that accepted
        // nothing (a listener that never reads) ended so, told "the peer closed it".
        libc::EPIPE | libc::ECONNRESET => format!(
            "the connection to {to} was reset: the peer closed it, the network refused it (the host \
             unreachable, a firewall), or the peer took nothing sent for over {wait} s and the kernel gave \
             the connection up"
        ),
        libc::ECONNREFUSED => format!("nothing listens at {to}: start the peer there first"),
        libc::EHOSTUNREACH | libc::ENETUNREACH => {
            format!("{to} cannot be reached from this host: no route to it")
        }
        libc::ECONNABORTED => format!("the connection to {to} was aborted by this host's network stack"),
        _ => return None,
    })
}

/// `A.B.C.D:PORT` in decimal (std's address parser is left out: its size counts on the boards).
fn parse_v4(s: &str) -> Option<SocketAddrV4> {
    let (ip, port) = s.split_once(':')?;
    let num = |t: &str| {
        (!t.is_empty() && t.len() <= 5 && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse::<u32>().ok())
            .flatten()
    };
    let mut o = [0u8; 4];
    let mut parts = ip.split('.');
    for b in &mut o {
        *b = u8::try_from(num(parts.next()?)?).ok()?;
    }
    if parts.next().is_some() {
        return None;
    }
    let port = u16::try_from(num(port)?).ok()?;
    Some(SocketAddrV4::new(std::net::Ipv4Addr::from(o), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_tcp_peer_is_an_ipv4_address_and_a_port() {
        let p = |s: &str| tcp_remote(Path::new(s));
        assert_eq!(
            p("tcp:10.0.2.100:9"),
            Some(Ok(SocketAddrV4::new([10, 0, 2, 100].into(), 9)))
        );
        assert_eq!(p("tcp"), None);
        assert_eq!(p("/tmp/tcp:1.2.3.4:5"), None);
        for bad in [
            "tcp:",
            "tcp:1.2.3:9",
            "tcp:host:9",
            "tcp:1.2.3.4",
            "tcp:1.2.3.4:70000",
            "tcp:1.2.3.4:0",
            "tcp:0.0.0.0:9",
        ] {
            let e = p(bad).unwrap().unwrap_err();
            assert!(e.starts_with(bad) && e.contains("tcp:ADDR:PORT"), "{e}");
        }
    }
}
