//! Who may do what (docs/console.md "Roles and rights"): the one rule every
//! action, and every page that offers a form, asks. Pure: no I/O.
//!
//! Each role has a set of rights, built in ([`defaults`]) or given in
//! `[msgx.console.rights]` (a list replaces the role's built-in set, so it
//! can tighten or widen it). An action needs its own right, and one on more
//! than [`BULK_OVER`] items needs [`Right::Bulk`] too, so an operator can
//! fix a few messages but a mass replay is an admin's decision.

use super::access::Role;
use crate::config::{ConsoleRights, Right};

/// An action on more items than this needs [`Right::Bulk`].
pub const BULK_OVER: i64 = 100;

/// A set of rights (one bit per [`Right`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Granted(u32);

impl Granted {
    /// No right at all (a viewer, an anonymous visitor).
    pub const NONE: Granted = Granted(0);

    pub fn of(rights: &[Right]) -> Granted {
        Granted(rights.iter().fold(0, |bits, r| bits | bit(*r)))
    }

    pub fn has(self, right: Right) -> bool {
        self.0 & bit(right) != 0
    }

    /// Whether any right other than `bulk` is held: the role may act at all.
    pub fn any_action(self) -> bool {
        Right::ALL
            .into_iter()
            .any(|r| r != Right::Bulk && self.has(r))
    }
}

fn bit(right: Right) -> u32 {
    1 << (right as u32)
}

/// The rights only an admin holds by default.
const ADMIN_ONLY: [Right; 4] = [
    Right::Bulk,
    Right::PauseJob,
    Right::Republish,
    Right::RevokeSession,
];

/// The built-in rights of `role`: a viewer reads, an operator fixes single
/// messages and runs jobs (every right but [`ADMIN_ONLY`]), an admin may do
/// everything.
pub fn defaults(role: Role) -> Granted {
    match role {
        Role::Viewer => Granted::NONE,
        Role::Operator => Granted(
            Right::ALL
                .into_iter()
                .filter(|r| !ADMIN_ONLY.contains(r))
                .fold(0, |bits, r| bits | bit(r)),
        ),
        Role::Admin => Granted::of(&Right::ALL),
    }
}

/// The effective rights of each role (built in, or from the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rights {
    viewer: Granted,
    operator: Granted,
    admin: Granted,
}

impl Rights {
    pub fn from_config(c: &ConsoleRights) -> Rights {
        let of = |list: &Option<Vec<Right>>, role| {
            list.as_deref().map_or_else(|| defaults(role), Granted::of)
        };
        Rights {
            viewer: of(&c.viewer, Role::Viewer),
            operator: of(&c.operator, Role::Operator),
            admin: of(&c.admin, Role::Admin),
        }
    }

    pub fn granted(&self, role: Role) -> Granted {
        match role {
            Role::Viewer => self.viewer,
            Role::Operator => self.operator,
            Role::Admin => self.admin,
        }
    }

    /// [`may`] with `role`'s rights.
    pub fn may(&self, role: Role, right: Right, count: i64) -> Result<(), MissingRight> {
        may(self.granted(role), role, right, count)
    }
}

/// A refusal: the right the role lacks for the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct MissingRight {
    pub role: Role,
    /// The right that is missing (`bulk` when only the count is too large).
    pub missing: Right,
    /// The action's own right.
    pub action: Right,
    /// The number of items the action was asked for.
    pub count: i64,
}

impl MissingRight {
    fn describe(&self) -> String {
        if self.missing == Right::Bulk {
            format!(
                "the {} role lacks the right \"bulk\": needed for {} on {} items (more than \
                 {BULK_OVER})",
                self.role.as_str(),
                self.action,
                self.count
            )
        } else {
            format!(
                "the {} role lacks the right \"{}\"",
                self.role.as_str(),
                self.missing
            )
        }
    }
}

/// Whether a principal of `role` holding `granted` may use `right` on
/// `count` items: the action's right, and [`Right::Bulk`] beyond
/// [`BULK_OVER`] items.
pub fn may(granted: Granted, role: Role, right: Right, count: i64) -> Result<(), MissingRight> {
    let missing = |missing| MissingRight {
        role,
        missing,
        action: right,
        count,
    };
    if !granted.has(right) {
        return Err(missing(right));
    }
    if count > BULK_OVER && !granted.has(Right::Bulk) {
        return Err(missing(Right::Bulk));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per action class: (right, count, viewer, operator, admin).
    #[test]
    fn each_role_is_tried_on_each_action_class() {
        let rights = Rights::from_config(&ConsoleRights::default());
        // (right, items, viewer may, operator may, admin may)
        let table: Vec<(Right, i64, bool, bool, bool)> = vec![
            (Right::Replay, 1, false, true, true),
            (Right::Skip, 1, false, true, true),
            (Right::Resend, 1, false, true, true),
            (Right::Discard, 1, false, true, true),
            (Right::Reopen, 1, false, true, true),
            (Right::Reconcile, 1, false, true, true),
            (Right::Request, 1, false, true, true),
            (Right::RunJob, 1, false, true, true),
            (Right::Replay, BULK_OVER, false, true, true),
            (Right::Replay, BULK_OVER + 1, false, false, true),
            (Right::Skip, 5_000, false, false, true),
            (Right::PauseJob, 1, false, false, true),
            (Right::Republish, 1, false, false, true),
            (Right::RevokeSession, 1, false, false, true),
        ];
        for (right, count, viewer, operator, admin) in table {
            for (role, expected) in [
                (Role::Viewer, viewer),
                (Role::Operator, operator),
                (Role::Admin, admin),
            ] {
                assert_eq!(
                    rights.may(role, right, count).is_ok(),
                    expected,
                    "{} on {right} x{count}",
                    role.as_str()
                );
            }
        }
    }

    #[test]
    fn a_refusal_names_the_missing_right() {
        let rights = Rights::from_config(&ConsoleRights::default());
        let e = rights.may(Role::Viewer, Right::Replay, 1).err();
        assert_eq!(
            e.map(|e| e.to_string()).as_deref(),
            Some("the viewer role lacks the right \"replay\"")
        );
        let e = rights.may(Role::Operator, Right::Replay, 250).err();
        assert_eq!(e.map(|e| e.missing), Some(Right::Bulk));
        assert_eq!(
            e.map(|e| e.to_string()).as_deref(),
            Some(
                "the operator role lacks the right \"bulk\": needed for replay on 250 items \
                 (more than 100)"
            )
        );
    }

    #[test]
    fn the_config_widens_and_tightens_a_role() {
        let c = ConsoleRights {
            viewer: Some(vec![Right::Request]),
            operator: Some(vec![Right::Replay, Right::Republish]),
            admin: None,
        };
        let rights = Rights::from_config(&c);
        assert!(
            rights.may(Role::Viewer, Right::Request, 1).is_ok(),
            "widened"
        );
        assert!(rights.may(Role::Viewer, Right::Replay, 1).is_err());
        assert!(
            rights.may(Role::Operator, Right::Republish, 1).is_ok(),
            "widened"
        );
        assert!(
            rights.may(Role::Operator, Right::Skip, 1).is_err(),
            "tightened"
        );
        assert!(rights.may(Role::Operator, Right::Replay, 101).is_err());
        assert!(rights.may(Role::Admin, Right::RevokeSession, 1).is_ok());
        let none = Rights::from_config(&ConsoleRights {
            admin: Some(vec![]),
            ..ConsoleRights::default()
        });
        assert!(!none.granted(Role::Admin).any_action());
        assert!(none.granted(Role::Operator).any_action());
    }
}
