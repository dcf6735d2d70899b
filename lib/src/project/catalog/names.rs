//! The rules a catalog's, a label's and a project's names follow, checked
//! before anything is written, so that names stay free for the grammar
//! monodex reserves (`@catalog:label:path`, `kind=payload`).

/// Characters kept for a later grammar, refused in every name now.
const RESERVED: [char; 4] = [':', '@', '+', '#'];

/// Why a name breaks its rule, said as the rule.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{what} name '{name}' {why}")]
pub struct NameError {
    what: &'static str,
    name: String,
    why: String,
}

/// A catalog's name: kebab-case, lowercase ASCII letters and digits in
/// words joined by single `-`, 1 to 64 characters (`team-api`).
pub fn check_catalog_name(name: &str) -> Result<(), NameError> {
    check_words(name, "catalog", 64, &['-'])
}

/// A label's name: git-like, lowercase ASCII letters and digits in words
/// joined by single `.`, `/`, `-` or `=`, 1 to 128 characters
/// (`release/v1.2`, `branch=main`; `=` is kept as written).
pub fn check_label_name(name: &str) -> Result<(), NameError> {
    check_words(name, "label", 128, &['.', '/', '-', '='])
}

/// A project's name within a catalog, the first segment of its files'
/// paths there: a directory name (letters, digits, `.`, `_`, `-`), 1 to 64
/// characters, not starting with `.`.
pub fn check_project_name(name: &str) -> Result<(), NameError> {
    let fail = |why: &str| Err(NameError { what: "project", name: name.into(), why: why.into() });
    if let Some(why) = reserved_or_blank(name) {
        return fail(&why);
    }
    if name.chars().count() > 64 {
        return fail("is longer than 64 characters");
    }
    if name.starts_with('.') {
        return fail("starts with '.'");
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))) {
        return fail(&format!("has '{c}': a project is named by letters, digits, '.', '_' and '-'"));
    }
    Ok(())
}

/// Lowercase words of ASCII letters and digits joined by one of `separators`.
fn check_words(name: &str, what: &'static str, max: usize, separators: &[char]) -> Result<(), NameError> {
    let fail = |why: String| Err(NameError { what, name: name.into(), why });
    let joined = separators.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", ");
    if let Some(why) = reserved_or_blank(name) {
        return fail(why);
    }
    if name.chars().count() > max {
        return fail(format!("is longer than {max} characters"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || separators.contains(c))) {
        let why = if c.is_ascii_uppercase() { "has an uppercase letter".to_string() } else { format!("has '{c}'") };
        return fail(format!("{why}: a {what} is lowercase letters and digits joined by {joined}"));
    }
    let first_or_last = name.starts_with(separators) || name.ends_with(separators);
    let doubled =
        name.chars().zip(name.chars().skip(1)).any(|(a, b)| separators.contains(&a) && separators.contains(&b));
    if first_or_last || doubled {
        return fail(format!("has a separator ({joined}) at an end or two in a row"));
    }
    Ok(())
}

/// Why a name is empty or holds a character kept for later, if it does.
fn reserved_or_blank(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".into());
    }
    let bad = name.chars().find(|c| RESERVED.contains(c) || c.is_whitespace() || c.is_control())?;
    let shown = if bad.is_control() || bad.is_whitespace() { format!("{:?}", bad) } else { format!("'{bad}'") };
    Some(format!("has {shown}, which is reserved (':', '@', '+', '#', whitespace and control characters)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_names_are_kebab_case_within_64_characters() {
        for ok in ["my-repo", "frontend", "backend-api", "a", "v2"] {
            assert_eq!(check_catalog_name(ok), Ok(()), "{ok}");
        }
        let long = "a".repeat(65);
        for (bad, why) in [
            ("My-Repo", "uppercase"),
            ("foo--bar", "two in a row"),
            ("foo_", "has '_'"),
            ("-foo", "at an end"),
            ("", "is empty"),
            ("team:api", "reserved"),
            ("team api", "reserved"),
            (long.as_str(), "longer than 64"),
        ] {
            let err = check_catalog_name(bad).unwrap_err().to_string();
            assert!(err.starts_with(&format!("catalog name '{bad}'")), "{err}");
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn label_names_are_git_like_and_keep_equals_as_written() {
        for ok in ["main", "feature/login-flow", "release/v1.2.3", "branch=main"] {
            assert_eq!(check_label_name(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("feature_login", "has '_'"),
            ("FOO", "uppercase"),
            ("foo//bar", "two in a row"),
            ("v1.", "at an end"),
            ("main@1", "reserved"),
            ("a+b", "reserved"),
            ("x#1", "reserved"),
            ("tab\there", "reserved"),
        ] {
            let err = check_label_name(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert!(check_label_name(&"a".repeat(128)).is_ok());
        assert!(check_label_name(&"a".repeat(129)).is_err());
    }

    #[test]
    fn project_names_are_directory_names_without_reserved_characters() {
        for ok in ["api", "My_Repo", "billing.v2"] {
            assert_eq!(check_project_name(ok), Ok(()), "{ok}");
        }
        for bad in [".hidden", "a b", "x:y", "über", ""] {
            assert!(check_project_name(bad).is_err(), "{bad}");
        }
    }
}
