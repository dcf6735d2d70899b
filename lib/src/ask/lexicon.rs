//! The words the rules planner knows: languages and their extensions,
//! numbers written out, spans of time, sizes, and what a test file looks
//! like. Kept apart from the rules that use them so that the table a
//! person extends is one screen, not spread through patterns.

/// Languages by the names people give them, with their files' extensions.
/// `c++`, `c#` and `f#` are read as `cpp`, `csharp` and `fsharp` first
/// (`normalized`): a word boundary cannot follow `+` or `#`.
pub(super) const LANGUAGES: &[(&str, &[&str])] = &[
    ("rust", &[".rs"]),
    ("python", &[".py", ".pyi"]),
    ("py", &[".py", ".pyi"]),
    ("golang", &[".go"]),
    ("go", &[".go"]),
    ("javascript", &[".js", ".mjs", ".cjs", ".jsx"]),
    ("js", &[".js", ".mjs", ".cjs", ".jsx"]),
    ("typescript", &[".ts", ".tsx", ".mts", ".cts"]),
    ("ts", &[".ts", ".tsx", ".mts", ".cts"]),
    ("java", &[".java"]),
    ("kotlin", &[".kt", ".kts"]),
    ("cpp", &[".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".h"]),
    ("c", &[".c", ".h"]),
    ("objectivec", &[".m", ".mm", ".h"]),
    ("objc", &[".m", ".mm", ".h"]),
    ("csharp", &[".cs"]),
    ("fsharp", &[".fs", ".fsx"]),
    ("ruby", &[".rb"]),
    ("php", &[".php"]),
    ("swift", &[".swift"]),
    ("scala", &[".scala"]),
    ("shell", &[".sh", ".bash", ".zsh"]),
    ("bash", &[".sh", ".bash"]),
    ("lua", &[".lua"]),
    ("haskell", &[".hs"]),
    ("elixir", &[".ex", ".exs"]),
    ("erlang", &[".erl", ".hrl"]),
    ("zig", &[".zig"]),
    ("dart", &[".dart"]),
    ("perl", &[".pl", ".pm"]),
    ("ocaml", &[".ml", ".mli"]),
    ("clojure", &[".clj", ".cljs", ".cljc"]),
    ("markdown", &[".md", ".markdown", ".mdx"]),
    ("yaml", &[".yml", ".yaml"]),
    ("toml", &[".toml"]),
    ("json", &[".json"]),
    ("sql", &[".sql"]),
    ("html", &[".html", ".htm"]),
    ("css", &[".css", ".scss"]),
    ("proto", &[".proto"]),
    ("protobuf", &[".proto"]),
];

/// The regex alternation of every language name, longest first so that
/// `javascript` is not read as `java`.
pub(super) fn language_names() -> String {
    let mut names: Vec<&str> = LANGUAGES.iter().map(|(n, _)| *n).collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    names.join("|")
}

/// The extensions of a language named `name` (any case).
pub(super) fn extensions_of(name: &str) -> &'static [&'static str] {
    let lower = name.to_ascii_lowercase();
    LANGUAGES.iter().find(|(n, _)| *n == lower).map_or(&[], |(_, e)| e)
}

/// Language names a word boundary cannot end, or that hold a hyphen the
/// rules would split at, as the words `LANGUAGES` knows them by.
const SPELLED: &[(&str, &str)] =
    &[("objective-c", "objectivec"), ("obj-c", "objectivec"), ("c++", "cpp"), ("c#", "csharp"), ("f#", "fsharp")];

/// The question with the language names a word boundary cannot end
/// (`c++`, `c#`, `f#`, `objective-c`) spelled as words; only where such a
/// name is a word of its own: `Topic#send` and `abc++` are left as written.
pub(super) fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let at_word_start = !out.chars().next_back().is_some_and(|p: char| p.is_alphanumeric() || p == '_');
        let spelled = SPELLED.iter().find(|(name, _)| {
            let (Some(head), Some(after)) = (rest.get(..name.len()), rest.get(name.len()..)) else { return false };
            head.eq_ignore_ascii_case(name) && !after.starts_with(|n: char| n.is_alphabetic() || n == '_')
        });
        match spelled {
            Some((name, word)) if at_word_start => {
                out.push_str(word);
                rest = &rest[name.len()..];
            }
            _ => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

/// Counts as people write them: digits, or a word.
pub(super) const NUMBER: &str =
    r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+couple\s+of|a\s+few|few|several";

/// The count `text` (a match of `NUMBER`) says.
pub(super) fn number(text: &str) -> Option<u64> {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
    Some(match words.as_str() {
        "a" | "an" | "one" => 1,
        "two" | "a couple of" => 2,
        "three" | "a few" | "few" | "several" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        digits => return digits.parse().ok(),
    })
}

/// Units of time as people write them.
pub(super) const TIME_UNIT: &str = r"(?:minute|min|hour|hr|day|week|wk|fortnight|month|mo|year|yr)s?";

/// Seconds in one `unit` (a match of `TIME_UNIT`); a month is 30 days and
/// a year 365, as `--changed-within` reads `1mo` and `1y`.
pub(super) fn seconds_in(unit: &str) -> u64 {
    let unit = unit.to_ascii_lowercase();
    let unit = unit.strip_suffix('s').filter(|u| !u.is_empty()).unwrap_or(&unit);
    match unit {
        "minute" | "min" => 60,
        "hour" | "hr" => 3600,
        "day" => 86_400,
        "week" | "wk" => 7 * 86_400,
        "fortnight" => 14 * 86_400,
        "month" | "mo" => 30 * 86_400,
        _ => 365 * 86_400,
    }
}

/// A size as people write it: a number and a unit of bytes.
pub(super) const SIZE: &str =
    r"(\d+(?:\.\d+)?)\s*(bytes?|b|kib|kb|k|kilobytes?|mib|mb|m|megabytes?|gib|gb|g|gigabytes?)\b";

/// Bytes in `amount` of `unit` (the captures of `SIZE`): k, kb, m, mb
/// powers of 1000, kib and mib of 1024, as `--size` reads them.
pub(super) fn bytes(amount: &str, unit: &str) -> Option<u64> {
    let amount: f64 = amount.parse().ok()?;
    let unit = unit.to_ascii_lowercase();
    let factor: f64 = match unit.as_str() {
        "b" | "byte" | "bytes" => 1.0,
        "k" | "kb" | "kilobyte" | "kilobytes" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" | "megabyte" | "megabytes" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gigabyte" | "gigabytes" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let total = amount * factor;
    (total.is_finite() && total < 1e18).then_some(total.round() as u64)
}

/// Files "large" and "small" say nothing exact; these are what the rules
/// read them as, stated in the plan like any other bound.
pub(super) const LARGE_FILE: u64 = 100_000;
pub(super) const SMALL_FILE: u64 = 10_000;

/// What a test file looks like, in the shapes common to many languages
/// (`search::rerank::paths` steps them back; here they are asked for or left out).
pub(super) const TEST_GLOBS: &[&str] = &[
    "tests/",
    "test/",
    "__tests__/",
    "spec/",
    "*_test.*",
    "*_spec.*",
    "test_*",
    "*.test.*",
    "*.spec.*",
    "*Test.*",
    "*Tests.*",
];

/// What a benchmark looks like: its directories (Rust's `benches/`,
/// `bench/`, `benchmarks/`) and files (`*_bench.*`, `bench_*`); Go's live
/// in its test files.
pub(super) const BENCH_GLOBS: &[&str] =
    &["benches/", "bench/", "benchmarks/", "benchmark/", "*_bench.*", "*_benchmark.*", "bench_*", "benchmark_*"];

/// Directories often left out by name (`not in vendor`).
pub(super) const COMMON_DIRS: &str = r"vendor|node_modules|third_party|generated|docs|doc|examples|build|dist|target|benches|scripts|migrations|src|pkg|internal|fixtures|testdata";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_units_read_as_numbers() {
        assert_eq!(
            (number("3"), number("a"), number("a  couple of"), number("Twelve")),
            (Some(3), Some(1), Some(2), Some(12))
        );
        assert_eq!(number("lots"), None);
        assert_eq!(
            (seconds_in("days"), seconds_in("wk"), seconds_in("months"), seconds_in("yr")),
            (86_400, 604_800, 2_592_000, 31_536_000)
        );
        assert_eq!(
            (bytes("10", "kb"), bytes("1.5", "MB"), bytes("2", "KiB"), bytes("3", "bytes")),
            (Some(10_000), Some(1_500_000), Some(2048), Some(3))
        );
        assert_eq!(bytes("1", "parsecs"), None);
    }

    #[test]
    fn languages_know_their_extensions_and_the_longest_name_wins() {
        assert_eq!(extensions_of("Rust"), [".rs"]);
        assert!(extensions_of("klingon").is_empty());
        assert!(language_names().find("javascript").unwrap() < language_names().find("|java|").unwrap());
        assert_eq!(normalized("C++ and c# or F# code"), "cpp and csharp or fsharp code");
        assert_eq!(normalized("日本 c# é"), "日本 csharp é", "letters of several bytes pass through");
        assert_eq!(normalized("Objective-C and c++17, Obj-C"), "objectivec and cpp17, objectivec");
        // Within a word, or running on into one, the characters are the word's.
        assert_eq!(normalized("Topic#send abc++ c#foo objective-cache"), "Topic#send abc++ c#foo objective-cache");
    }
}
