//! The macros of values written as text: an enum written as names (case settings, case keys,
//! claim operators), and a type that serde writes and reads through its text.

/// Declares a fieldless enum and, after `names`, the text scenarios, results files and the
/// command line write each variant as; from these come `ALL` (in the order of `names`), `name`,
/// `parse`, `FromStr` and `Display`. A variant without a name, or a name without its variant,
/// does not compile.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $t:ident {
            $($(#[$vmeta:meta])* $variant:ident,)+
        }
        names $($v:ident = $name:literal),+;
    ) => {
        $(#[$meta])*
        $vis enum $t {
            $($(#[$vmeta])* $variant,)+
        }

        impl $t {
            /// Every value, in the order of its names.
            pub const ALL: [$t; [$($name),+].len()] = [$($t::$v),+];
            /// Every name, in the same order.
            pub const NAMES: [&'static str; [$($name),+].len()] = [$($name),+];
            /// The name it is written as.
            pub fn name(self) -> &'static str {
                match self {
                    $($t::$v => $name,)+
                }
            }
            /// The value written as `s`.
            pub fn parse(s: &str) -> Option<$t> {
                Self::ALL.into_iter().find(|v| v.name() == s)
            }
        }

        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                $t::parse(s).ok_or_else(|| {
                    let names: Vec<&str> = $t::ALL.iter().map(|v| v.name()).collect();
                    format!("`{s}` is not one of {}", names.join(", "))
                })
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.name())
            }
        }
    };
}
pub(super) use named_enum;

/// A case setting's values: a [`named_enum!`] with the derives every setting has, serialized
/// by the same names (kebab-case).
macro_rules! setting_enum {
    ($(#[$meta:meta])* pub enum $t:ident { $($body:tt)* } $($names:tt)*) => {
        named_enum! {
            $(#[$meta])*
            #[derive(
                Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord,
                Default,
            )]
            #[serde(rename_all = "kebab-case")]
            pub enum $t { $($body)* }
            $($names)*
        }
    };
}
pub(super) use setting_enum;

/// `From<T> for String` (its `Display`) and `TryFrom<String> for T` (through `parse`, whose error
/// is the message): what `#[serde(into = "String", try_from = "String")]` needs of a type that
/// files hold as text (a row's `axes`, a samples series).
macro_rules! written_as_text {
    ($t:ty, $parse:expr) => {
        impl From<$t> for String {
            fn from(v: $t) -> String {
                v.to_string()
            }
        }

        impl TryFrom<String> for $t {
            type Error = String;
            fn try_from(s: String) -> Result<$t, String> {
                ($parse)(s.as_str())
            }
        }
    };
}
pub(crate) use written_as_text;
