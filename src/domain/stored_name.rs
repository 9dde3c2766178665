//! Enums stored as fixed upper-case texts (the states of PROC_STATE,
//! MSG_EVENT, REQ_TRACK, JOB_RUN): one declaration gives the variants, their
//! stored text, `ALL` in declaration order, `as_str`, `Display`, `FromStr`
//! (exact text) and `TryFrom<String>` for the store's row mapping
//! (`#[sqlx(try_from = "String")]`). The store writes only these texts and
//! the columns' CHECK constraints admit only them, so a text that names no
//! variant is a corrupt row or a typo on the command line:
//! [`UnknownName`].

/// A text that names no state or class (a corrupt row, a typo on the CLI).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a known {1}")]
pub struct UnknownName(pub String, pub &'static str);

/// Declares a stored-name enum. The first literal names the kind of value in
/// errors (`"PROC_STATE state"`).
///
/// ```ignore
/// stored_names! {
///     /// REQ_TRACK.STATE.
///     #[derive(Serialize)]
///     pub enum RequestState ("REQ_TRACK state") {
///         Pending = "PENDING",
///         Sent = "SENT",
///     }
/// }
/// ```
macro_rules! stored_names {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($kind:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The stored text.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text ),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::domain::stored_name::UnknownName;
            /// The value stored as `text` (exactly).
            fn from_str(text: &str) -> ::std::result::Result<Self, Self::Err> {
                $name::ALL
                    .into_iter()
                    .find(|v| v.as_str() == text)
                    .ok_or_else(|| $crate::domain::stored_name::UnknownName(text.to_string(), $kind))
            }
        }

        impl ::std::convert::TryFrom<String> for $name {
            type Error = $crate::domain::stored_name::UnknownName;
            /// For the store's row mapping (`#[sqlx(try_from = "String")]`).
            fn try_from(text: String) -> ::std::result::Result<Self, Self::Error> {
                text.parse()
            }
        }
    };
}

pub(crate) use stored_names;

#[cfg(test)]
mod tests {
    stored_names! {
        /// A test enum.
        enum Light ("light") {
            Red = "RED",
            /// Documented variant.
            Green = "GREEN",
        }
    }

    #[test]
    fn texts_round_trip_and_unknown_texts_are_named() {
        assert_eq!(Light::ALL, [Light::Red, Light::Green]);
        for l in Light::ALL {
            assert_eq!(l.as_str().parse::<Light>(), Ok(l));
            assert_eq!(Light::try_from(l.to_string()), Ok(l));
        }
        let err = "red".parse::<Light>().unwrap_err();
        assert_eq!(err.to_string(), "\"red\" is not a known light");
    }
}
