//! How a `msgx` process ends: one type for every command and the daemon, so
//! a code is never a bare integer. The numbers are a contract with scripts
//! and service managers (README "Exit codes"; systemd's
//! `RestartPreventExitStatus` names 2 and 4).

/// The exit status of a `msgx` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: done.
    Ok,
    /// 1: a runtime failure (a store down, a job failed).
    Failure,
    /// 2: the configuration or the command line is invalid.
    Config,
    /// 3: the job is not implemented yet.
    NotImplemented,
    /// 3: `msgx dev caught-up`: an outcome that waiting cannot mend (a DEAD
    /// message not caused by its content, a DEAD outbox event, an abandoned
    /// backfill mark); the harness stops waiting.
    Fatal,
    /// 4: the lock is held elsewhere, or was lost.
    Locked,
    /// 5: `msgx decode`: a message is MALFORMED.
    Malformed,
    /// 6: `msgx decode`: a message has a CODEC_ERROR (and none is MALFORMED).
    Codec,
    /// 7: `msgx run`: the job is paused by an operator (`msgx jobs`); `--force`
    /// runs it anyway. Distinct from 4 so a cron wrapper can tell an
    /// intended pause from a busy lock.
    Paused,
}

impl Exit {
    /// The process exit code.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Failure => 1,
            Exit::Config => 2,
            Exit::NotImplemented | Exit::Fatal => 3,
            Exit::Locked => 4,
            Exit::Malformed => 5,
            Exit::Codec => 6,
            Exit::Paused => 7,
        }
    }

    /// `Ok` when `ok`, else `Failure`.
    pub const fn from_success(ok: bool) -> Exit {
        if ok { Exit::Ok } else { Exit::Failure }
    }

    pub const fn is_ok(self) -> bool {
        matches!(self, Exit::Ok)
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::Exit;

    #[test]
    fn the_codes_are_the_documented_ones() {
        let all = [
            Exit::Ok,
            Exit::Failure,
            Exit::Config,
            Exit::NotImplemented,
            Exit::Locked,
            Exit::Malformed,
            Exit::Codec,
            Exit::Fatal,
            Exit::Paused,
        ];
        let codes: Vec<u8> = all.iter().map(|e| e.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6, 3, 7]);
    }
}
