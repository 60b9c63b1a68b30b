//! The fault flags.

use std::time::Duration;

use crate::Faults;

/// The fault flags of the `svc-emulator` binary and `svc emulator`, each with its environment
/// variable. Part of [`EmulatorArgs`](crate::cli::EmulatorArgs).
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Fault mode (for testing clients)")]
pub struct FaultArgs {
    /// Added latency before each request is handled, in milliseconds.
    #[arg(long, env = "SVC_EMULATOR_FAULT_LATENCY_MS", value_name = "MS")]
    pub fault_latency_ms: Option<u64>,

    /// Share of requests (0 to 1) answered `503` with `Retry-After`, without running them.
    #[arg(long = "fault-503-share", env = "SVC_EMULATOR_FAULT_503_SHARE", value_name = "SHARE", value_parser = parse_share)]
    pub fault_503_share: Option<f64>,

    /// The `Retry-After` of those `503` answers, in seconds.
    #[arg(
        long,
        env = "SVC_EMULATOR_FAULT_RETRY_AFTER",
        value_name = "SECONDS",
        default_value_t = 1
    )]
    pub fault_retry_after: u64,

    /// Send that `Retry-After` as an HTTP-date (now plus the seconds) instead of seconds.
    #[arg(long, env = "SVC_EMULATOR_FAULT_RETRY_AFTER_DATE")]
    pub fault_retry_after_date: bool,

    /// Share of requests (0 to 1) whose connection is closed before they run, unanswered.
    #[arg(long, env = "SVC_EMULATOR_FAULT_DROP_SHARE", value_name = "SHARE", value_parser = parse_share)]
    pub fault_drop_share: Option<f64>,

    /// Share of requests (0 to 1) that run, then have their answer cut off midway.
    #[arg(long, env = "SVC_EMULATOR_FAULT_DROP_MIDWAY_SHARE", value_name = "SHARE", value_parser = parse_share)]
    pub fault_drop_midway_share: Option<f64>,

    /// Close keep-alive connections idle for this long, in milliseconds.
    #[arg(long, env = "SVC_EMULATOR_FAULT_IDLE_CLOSE_MS", value_name = "MS")]
    pub fault_idle_close_ms: Option<u64>,

    /// Seed of the generator that picks faulty requests, for repeatable runs.
    #[arg(long, env = "SVC_EMULATOR_FAULT_SEED", value_name = "N")]
    pub fault_seed: Option<u64>,

    /// Inject faults only into these methods (comma-separated, e.g. `GET,DELETE`).
    #[arg(
        long,
        env = "SVC_EMULATOR_FAULT_METHODS",
        value_name = "METHODS",
        value_delimiter = ','
    )]
    pub fault_methods: Vec<String>,
}

impl FaultArgs {
    /// The faults these flags describe, `None` when no fault is set.
    pub fn to_faults(&self) -> Option<Faults> {
        let mut faults = Faults::new();
        if let Some(ms) = self.fault_latency_ms {
            faults = faults.latency(Duration::from_millis(ms));
        }
        if let Some(share) = self.fault_503_share {
            faults = faults
                .unavailable(share, self.fault_retry_after)
                .retry_after_as_http_date(self.fault_retry_after_date);
        }
        if let Some(share) = self.fault_drop_share {
            faults = faults.drop_before(share);
        }
        if let Some(share) = self.fault_drop_midway_share {
            faults = faults.drop_midway(share);
        }
        if let Some(ms) = self.fault_idle_close_ms {
            faults = faults.idle_close(Duration::from_millis(ms.max(1)));
        }
        if let Some(seed) = self.fault_seed {
            faults = faults.seed(seed);
        }
        if !self.fault_methods.is_empty() {
            faults = faults.only_methods(self.fault_methods.iter().map(|m| m.trim()));
        }
        faults.is_active().then_some(faults)
    }
}

fn parse_share(text: &str) -> Result<f64, String> {
    let share: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if (0.0..=1.0).contains(&share) {
        Ok(share)
    } else {
        Err(format!("{share} is not a share between 0 and 1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_after_date_flag() {
        use clap::Parser;
        #[derive(Debug, clap::Parser)]
        struct Cli {
            #[command(flatten)]
            faults: FaultArgs,
        }
        let cli = Cli::try_parse_from([
            "emulator",
            "--fault-503-share",
            "1",
            "--fault-retry-after",
            "5",
            "--fault-retry-after-date",
        ])
        .unwrap();
        let f = cli.faults.to_faults().unwrap();
        assert_eq!(
            (f.retry_after_secs(), f.retry_after_is_http_date()),
            (5, true)
        );
        let cli = Cli::try_parse_from(["emulator", "--fault-503-share", "1"]).unwrap();
        assert!(!cli.faults.to_faults().unwrap().retry_after_is_http_date());
    }

    #[test]
    fn shares_are_clamped_and_flags_build_faults() {
        let f = Faults::new().unavailable(7.0, 1).drop_before(f64::NAN);
        assert_eq!(f.unavailable_share(), 1.0);
        assert_eq!(f.drop_before_share(), 0.0);
        assert!(!Faults::new().is_active());
        assert!(FaultArgs::default().to_faults().is_none());
        let args = FaultArgs {
            fault_latency_ms: Some(5),
            fault_503_share: Some(0.5),
            fault_retry_after: 2,
            fault_methods: vec!["GET".into()],
            ..FaultArgs::default()
        };
        let f = args.to_faults().unwrap();
        assert_eq!(f.latency_per_request(), Duration::from_millis(5));
        assert_eq!((f.unavailable_share(), f.retry_after_secs()), (0.5, 2));
        assert_eq!(f.selected_methods(), Some(&["GET".to_owned()][..]));
        assert!(parse_share("1.5").is_err());
        assert!(parse_share("x").is_err());
        assert_eq!(parse_share(" 0.3 "), Ok(0.3));
    }
}
