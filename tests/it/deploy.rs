//! The deployment files as an operator installs them (issue 16, item 5):
//! every line of `deploy/msgx.cron` run with `/bin/sh` as cron would, with a
//! temporary env file, hands the variables to msgx, and a missing env file
//! stops the line before msgx runs.

use std::path::Path;
use std::process::Command;

/// The command part of each job line of the cron file (after the five
/// time fields and the user).
fn cron_commands() -> Vec<String> {
    let cron =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/msgx.cron"))
            .expect("deploy/msgx.cron");
    cron.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.contains('='))
        .map(|l| l.split_whitespace().skip(6).collect::<Vec<_>>().join(" "))
        .collect()
}

/// Runs `line` with /bin/sh, a clean environment, `env_file` in place of
/// /etc/msgx/msgx.env and a stand-in `msgx` that records its environment.
fn run_line(line: &str, dir: &Path, env_file: &Path) -> (bool, Option<String>) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let seen = dir.join("seen.env");
    let _ = std::fs::remove_file(&seen);
    let stand_in = bin.join("msgx");
    std::fs::write(&stand_in, format!("#!/bin/sh\nenv > {}\n", seen.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let line = line
        .replace("/etc/msgx/msgx.env", &env_file.display().to_string())
        .replace(
            "/var/log/msgx/cron.log",
            &dir.join("cron.log").display().to_string(),
        );
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(&line)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("MSGX_CONFIG", "/etc/msgx/msgx.toml")
        .status()
        .expect("run /bin/sh");
    (status.success(), std::fs::read_to_string(&seen).ok())
}

#[test]
fn every_cron_line_exports_the_env_file_to_msgx() {
    let lines = cron_commands();
    assert!(lines.len() >= 3, "the maintenance jobs: {lines:?}");
    let dir = tempfile::tempdir().unwrap();
    let env_file = dir.path().join("msgx.env");
    std::fs::write(
        &env_file,
        "MSGX_DATABASE_URL=postgres://msgx@db.example/msgx\nMSGX_MAILBOX_URL=mysql://mb@mb.example/mailbox\n",
    )
    .unwrap();
    for line in &lines {
        let (ok, seen) = run_line(line, dir.path(), &env_file);
        assert!(ok, "{line}");
        let seen = seen.unwrap_or_else(|| panic!("msgx did not run: {line}"));
        assert!(
            seen.contains("MSGX_DATABASE_URL=postgres://msgx@db.example/msgx"),
            "{line}: {seen}"
        );
        assert!(
            seen.contains("MSGX_MAILBOX_URL=mysql://mb@mb.example/mailbox"),
            "{line}: {seen}"
        );
    }
}

#[test]
fn a_missing_env_file_stops_the_line_before_msgx_runs() {
    let dir = tempfile::tempdir().unwrap();
    for line in cron_commands() {
        let (ok, seen) = run_line(&line, dir.path(), &dir.path().join("absent.env"));
        assert!(!ok, "{line}");
        assert_eq!(seen, None, "msgx must not run without its env file: {line}");
    }
}

#[test]
fn the_units_require_the_env_file_and_run_the_doctor_first() {
    for unit in ["msgx.service", "msgx-standby.service"] {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("deploy")
                .join(unit),
        )
        .unwrap();
        assert!(
            text.contains("\nEnvironmentFile=/etc/msgx/msgx.env\n"),
            "{unit}: not optional"
        );
        assert!(
            text.contains("\nExecStartPre=/usr/local/bin/msgx doctor\n"),
            "{unit}"
        );
        for key in [
            "UMask=0027",
            "CapabilityBoundingSet=\n",
            "RestrictAddressFamilies=",
            "SystemCallFilter=@system-service",
            "MemoryMax=",
            "LimitNOFILE=",
        ] {
            assert!(text.contains(key), "{unit} lacks {key}");
        }
    }
}
