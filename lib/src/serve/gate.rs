//! Which connections the server holds open: at most `per_client` from one
//! address and `total` in all. Each connection has a thread of its own for
//! its reading and writing, so a client that connects and sends nothing,
//! or drips a byte at a time, holds one small thread and one slot, never a
//! worker (issue 42: 16 idle sockets once took all 16 workers). When an
//! address, or the server, is at its bound, the connection that has waited
//! longest for a request head is closed to make room; when every one is
//! busy with a request, or holds one its thread has not read yet, the
//! newcomer is refused.

use std::collections::HashMap;
use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The open connections, counted and closed from the accepting thread.
pub(super) struct Gate {
    per_client: usize,
    total: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    next: u64,
    conns: HashMap<u64, Conn>,
}

struct Conn {
    client: IpAddr,
    /// Since when it has waited for a request head; None while a request
    /// is being answered.
    idle_since: Option<Instant>,
    /// Since when the bytes of a head have been coming in, not yet whole.
    reading_since: Option<Instant>,
    /// A handle to close it by.
    stream: TcpStream,
}

/// One admitted connection; it leaves the count when dropped.
pub(super) struct Slot {
    gate: Arc<Gate>,
    id: u64,
}

impl Gate {
    pub(super) fn new(per_client: usize, total: usize) -> Arc<Gate> {
        Arc::new(Gate { per_client: per_client.max(1), total: total.max(1), open: Mutex::default() })
    }

    /// Admit `stream` from `client`, closing the longest-idle connection of
    /// that address (or of all, at the total bound) to make room; None when
    /// every connection in the way is busy with a request.
    pub(super) fn admit(self: &Arc<Gate>, stream: &TcpStream, client: IpAddr) -> Option<Slot> {
        let handle = stream.try_clone().ok()?;
        let mut open = crate::live::lock(&self.open);
        if open.conns.values().filter(|c| c.client == client).count() >= self.per_client {
            open.close_longest_idle(|c| c.client == client)?;
        }
        if open.conns.len() >= self.total {
            open.close_longest_idle(|_| true)?;
        }
        let id = open.next;
        open.next += 1;
        open.conns.insert(id, Conn { client, idle_since: Some(Instant::now()), reading_since: None, stream: handle });
        Some(Slot { gate: Arc::clone(self), id })
    }

    /// How many connections are open now.
    #[cfg(test)]
    fn count(&self) -> usize {
        crate::live::lock(&self.open).conns.len()
    }
}

/// `wanted` connections, or fewer where the process's open-file limit
/// would run out first: each connection holds two descriptors, and a server
/// out of descriptors could accept no one, not even to close an idle
/// connection for them (a soft limit of 1024 is common).
pub(super) fn within_open_files(wanted: usize) -> usize {
    let limit = std::fs::read_to_string("/proc/self/limits").ok().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("Max open files"))?;
        line.split_whitespace().nth(3)?.parse::<usize>().ok()
    });
    match limit {
        // Room for the index, the model, the listener and the indexer's files.
        Some(limit) => wanted.min(limit.saturating_sub(128) / 2).max(1),
        None => wanted,
    }
}

impl Open {
    /// Close the connection among those `eligible` that has waited longest
    /// for a request head; None when none waits. One whose request has
    /// arrived but is not read yet (its thread has not run since it was
    /// admitted: a client that opens many connections at once) waits for
    /// nothing, and closing it would drop a request unanswered.
    fn close_longest_idle(&mut self, eligible: impl Fn(&Conn) -> bool) -> Option<()> {
        let (&id, _) = self
            .conns
            .iter()
            .filter(|(_, c)| eligible(c))
            .filter_map(|(id, c)| c.idle_since.map(|t| (id, t, c)))
            .filter(|(_, _, c)| match c.reading_since {
                // A head that has been coming in for long is dripped, not sent.
                Some(began) => began.elapsed() >= READING_GRACE,
                None => !has_unread_bytes(&c.stream),
            })
            .map(|(id, t, _)| (id, t))
            .min_by_key(|(_, t)| *t)?;
        let conn = self.conns.remove(&id)?;
        // Its thread's read ends at once; the thread then drops its Slot.
        let _ = conn.stream.shutdown(Shutdown::Both);
        Some(())
    }
}

/// Whether bytes the client sent wait unread on `stream`. A peek that
/// never blocks, per call: the descriptor's own mode is shared with the
/// connection's thread, which reads it blocking.
#[allow(unsafe_code)]
fn has_unread_bytes(stream: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    let mut byte = 0u8;
    // SAFETY: recv writes at most one byte into a buffer of one byte we own.
    let read =
        unsafe { libc::recv(stream.as_raw_fd(), (&raw mut byte).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    read > 0
}

/// How long a head may take to come in whole before its connection counts
/// as idle again: a client sends its head at once, a drip takes seconds.
const READING_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

impl Slot {
    /// The first bytes of a request head are in hand (read from the socket,
    /// where the gate's peek no longer sees them): not to be closed for
    /// room unless the rest takes longer than `READING_GRACE`.
    pub(super) fn reading(&self) {
        let now = Instant::now();
        // A pipelined head follows an answer with no wait marked idle.
        self.set(|conn| (conn.idle_since, conn.reading_since) = (Some(conn.idle_since.unwrap_or(now)), Some(now)));
    }

    /// A request head has arrived: not to be closed for room while answered.
    pub(super) fn busy(&self) {
        self.set(|conn| (conn.idle_since, conn.reading_since) = (None, None));
    }

    /// Answered: waiting for the next request head.
    pub(super) fn idle(&self) {
        self.set(|conn| (conn.idle_since, conn.reading_since) = (Some(Instant::now()), None));
    }

    fn set(&self, change: impl FnOnce(&mut Conn)) {
        if let Some(conn) = crate::live::lock(&self.gate.open).conns.get_mut(&self.id) {
            change(conn);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        crate::live::lock(&self.gate.open).conns.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// `n` connected pairs (client end, server end) over loopback.
    fn pairs(n: usize) -> Vec<(TcpStream, TcpStream)> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        (0..n).map(|_| (TcpStream::connect(addr).unwrap(), listener.accept().unwrap().0)).collect()
    }

    fn closed(client: &mut TcpStream) -> bool {
        client.set_read_timeout(Some(std::time::Duration::from_millis(100))).unwrap();
        matches!(client.read(&mut [0u8; 1]), Ok(0))
    }

    #[test]
    fn an_address_at_its_bound_loses_its_longest_idle_connection() {
        let gate = Gate::new(2, 10);
        let mut conns = pairs(4);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let first = gate.admit(&conns[0].1, a).unwrap();
        let second = gate.admit(&conns[1].1, a).unwrap();
        second.busy();
        let third = gate.admit(&conns[2].1, a).expect("room made by closing the first");
        assert!(closed(&mut conns[0].0), "the idle one was closed");
        assert!(!closed(&mut conns[1].0), "the busy one was not");
        drop(first);
        assert_eq!(gate.count(), 2);
        // Both of the address's connections now answer requests: the next is refused.
        third.busy();
        assert!(gate.admit(&conns[3].1, a).is_none());
        // Another address has its own share.
        assert!(gate.admit(&conns[3].1, "127.0.0.2".parse().unwrap()).is_some());
    }

    #[test]
    fn a_connection_whose_request_waits_unread_is_not_closed_for_room() {
        use std::io::Write;
        let gate = Gate::new(2, 10);
        let mut conns = pairs(4);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let _first = gate.admit(&conns[0].1, a).unwrap();
        let _second = gate.admit(&conns[1].1, a).unwrap();
        // Both were admitted and neither thread has read yet; the first's request has come.
        conns[0].0.write_all(b"GET /health HTTP/1.1\r\n\r\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let _third = gate.admit(&conns[2].1, a).expect("room made by closing the second");
        assert!(closed(&mut conns[1].0), "the one with nothing to read was closed");
        assert!(!closed(&mut conns[0].0), "the one holding a request was not");
        let mut unread = [0u8; 3];
        conns[0].1.read_exact(&mut unread).unwrap();
        assert_eq!(&unread, b"GET", "the peek left the request in place");
        // Now every connection of the address holds a request: the next is refused.
        conns[2].0.write_all(b"GET").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(gate.admit(&conns[3].1, a).is_none());
    }

    #[test]
    fn a_head_being_read_is_kept_unless_it_drips() {
        let gate = Gate::new(1, 10);
        let mut conns = pairs(3);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let first = gate.admit(&conns[0].1, a).unwrap();
        // Its thread has taken the head's first bytes from the socket.
        first.reading();
        assert!(gate.admit(&conns[1].1, a).is_none(), "a head in hand is not dropped");
        assert!(!closed(&mut conns[0].0));
        // A head still not whole after the grace is dripped: room is made.
        std::thread::sleep(READING_GRACE + std::time::Duration::from_millis(50));
        let _second = gate.admit(&conns[2].1, a).expect("the dripping connection made room");
        assert!(closed(&mut conns[0].0));
        // A pipelined head, read after an answer with no idle wait between, drips the same.
        let mut more = pairs(2);
        let third = gate.admit(&more[0].1, "127.0.0.3".parse().unwrap()).unwrap();
        third.busy();
        third.reading();
        std::thread::sleep(READING_GRACE + std::time::Duration::from_millis(50));
        assert!(gate.admit(&more[1].1, "127.0.0.3".parse().unwrap()).is_some());
        assert!(closed(&mut more[0].0), "the pipelined drip made room");
    }

    #[test]
    fn the_total_bound_leaves_descriptors_to_spare() {
        let limit: usize = std::fs::read_to_string("/proc/self/limits")
            .unwrap()
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
            .unwrap_or(usize::MAX);
        let total = within_open_files(1024);
        assert!(total <= 1024 && (total == 1024 || total * 2 + 128 <= limit), "{total} of {limit}");
        assert_eq!(within_open_files(3), 3.min(limit.saturating_sub(128) / 2).max(1));
    }

    #[test]
    fn the_total_bound_closes_the_longest_idle_of_any_address() {
        let gate = Gate::new(5, 3);
        let mut conns = pairs(4);
        let slots: Vec<Slot> =
            (0..3).map(|i| gate.admit(&conns[i].1, IpAddr::from([127, 0, 0, 1 + i as u8])).unwrap()).collect();
        slots[0].busy();
        let _newcomer = gate.admit(&conns[3].1, "127.0.0.9".parse().unwrap()).unwrap();
        assert!(closed(&mut conns[1].0), "the longest idle, the second, made room");
        assert!(!closed(&mut conns[0].0) && !closed(&mut conns[2].0));
        assert_eq!(gate.count(), 3);
    }
}
