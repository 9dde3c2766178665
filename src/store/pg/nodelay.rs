//! TCP_NODELAY on the PostgreSQL sessions (burst catch-up).
//!
//! sqlx 0.9.0 connects its TCP sockets without `TCP_NODELAY` (a regression:
//! upstream issue transact-rs/sqlx#4335, fixed by #4336, not released as of
//! 0.9.0). Over TLS a statement's protocol messages leave in more than one
//! write, and Nagle's algorithm holds the last one until the server's
//! delayed ACK (40 ms on Linux): measured, `pump-drain` on 20,000 FLOPs took
//! 40 s over TLS and 7 s without it (docs/BENCHMARKS.md, "TCP_NODELAY").
//! sqlx offers no socket hook, so after each new session this sets the
//! option on every TCP socket of the process. That is harmless for the
//! others: mysql_async and librdkafka set it themselves, and every protocol
//! msgx speaks is request/response. Remove this once sqlx ships the fix.

/// Sets `TCP_NODELAY` on every open TCP socket of this process; returns how
/// many accepted it (0 where `/proc/self/fd` does not exist).
pub fn set_on_all_tcp_sockets() -> usize {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    let mut set = 0;
    for entry in dir.flatten() {
        let is_socket = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"));
        let fd = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok());
        if let (true, Some(fd)) = (is_socket, fd)
            && set_nodelay(fd)
        {
            set += 1;
        }
    }
    set
}

/// `setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, 1)`; false when the fd is not a
/// TCP socket (UDP, Unix, closed meanwhile: the call fails and changes
/// nothing).
fn set_nodelay(fd: i32) -> bool {
    let one: libc::c_int = 1;
    // SAFETY: setsockopt only reads `size_of::<c_int>()` bytes from `&one`,
    // which lives across the call; an fd that is not a TCP socket (or no
    // longer open) makes it return -1 without side effects.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            std::ptr::from_ref(&one).cast::<libc::c_void>(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    rc == 0
}

/// Whether `fd` has `TCP_NODELAY` set (`None`: not a TCP socket). For tests.
pub fn is_set(fd: i32) -> Option<bool> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`, both live
    // across the call.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            std::ptr::from_mut(&mut value).cast::<libc::c_void>(),
            &mut len,
        )
    };
    (rc == 0).then_some(value != 0)
}
