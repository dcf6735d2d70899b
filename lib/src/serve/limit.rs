//! How many requests each client address may make: a sliding window of 60
//! seconds, as lc0_vic's bridge counts them, so that one noisy client cannot
//! starve the others of the model.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The window requests are counted over.
const WINDOW: Duration = Duration::from_secs(60);

/// Addresses kept before those with nothing in the window are forgotten.
const SWEEP_ABOVE: usize = 1024;

/// Requests admitted per client address in the last `WINDOW`.
pub(crate) struct RateLimiter {
    per_window: usize,
    admitted: Mutex<HashMap<IpAddr, VecDeque<Instant>>>,
}

impl RateLimiter {
    /// At most `per_minute` requests a minute from one address; 0 lets every request through.
    pub(crate) fn new(per_minute: u32) -> Self {
        RateLimiter { per_window: per_minute as usize, admitted: Mutex::new(HashMap::new()) }
    }

    /// Admit a request from `client` at `now`, or say in how many seconds
    /// (at least 1) the oldest of its requests leaves the window.
    pub(crate) fn admit(&self, client: IpAddr, now: Instant) -> Result<(), u64> {
        if self.per_window == 0 {
            return Ok(());
        }
        let mut admitted = crate::live::lock(&self.admitted);
        if admitted.len() > SWEEP_ABOVE {
            admitted.retain(|_, times| times.back().is_some_and(|t| now.duration_since(*t) < WINDOW));
        }
        let times = admitted.entry(client).or_default();
        while times.front().is_some_and(|t| now.duration_since(*t) >= WINDOW) {
            times.pop_front();
        }
        if times.len() >= self.per_window {
            let oldest = *times.front().expect("the window is full");
            let wait = WINDOW.saturating_sub(now.duration_since(oldest));
            return Err(wait.as_secs_f64().ceil().max(1.0) as u64);
        }
        times.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_has_its_own_window() {
        let limiter = RateLimiter::new(3);
        let (a, b): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let start = Instant::now();
        for i in 0..3 {
            assert!(limiter.admit(a, start + Duration::from_secs(i)).is_ok());
        }
        assert_eq!(limiter.admit(a, start + Duration::from_secs(10)), Err(50), "the first leaves at 60 s");
        assert!(limiter.admit(b, start + Duration::from_secs(10)).is_ok(), "another address is not limited");
        // Refused requests do not count: at 60 s the first has left the window.
        assert!(limiter.admit(a, start + Duration::from_secs(60)).is_ok());
        assert_eq!(limiter.admit(a, start + Duration::from_millis(60_500)), Err(1));
        assert!(limiter.admit(a, start + Duration::from_secs(62)).is_ok());
    }

    #[test]
    fn zero_disables_the_limit() {
        let limiter = RateLimiter::new(0);
        let a: IpAddr = "::1".parse().unwrap();
        let now = Instant::now();
        assert!((0..10_000).all(|_| limiter.admit(a, now).is_ok()));
    }

    #[test]
    fn addresses_with_nothing_in_the_window_are_forgotten() {
        let limiter = RateLimiter::new(1);
        let start = Instant::now();
        for i in 0..(SWEEP_ABOVE as u32 + 10) {
            let ip = IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000 + i));
            limiter.admit(ip, start).unwrap();
        }
        limiter.admit("127.0.0.1".parse().unwrap(), start + WINDOW).unwrap();
        assert_eq!(crate::live::lock(&limiter.admitted).len(), 1);
    }
}
