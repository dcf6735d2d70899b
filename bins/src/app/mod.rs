//! Glue shared by the binaries, one module per concept: how a tool ends
//! (`exit`) and what it writes (`output`), parsing its arguments (`args`),
//! resolving an invocation's root, paths and settings (`invocation`),
//! loading embedders (`embedders`), a blocking index run with its progress
//! (`index_run`), interrupts (`interrupt`) and the notes a run says
//! (`notes`). Callers name everything as `app::item`.

mod args;
mod embedders;
mod exit;
mod index_run;
mod interrupt;
mod invocation;
mod notes;
mod output;

pub use args::*;
pub use embedders::*;
pub use exit::*;
pub use index_run::*;
pub use interrupt::*;
pub use invocation::*;
pub use notes::*;
pub use output::*;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use vecgrep::project::{ConfigValues, SETTINGS};

    use super::*;

    #[test]
    fn every_setting_flag_reaches_the_config() {
        let mut flagged = BTreeSet::new();
        // The porcelain reads no config; its flags reach the tools (`porcelain`'s tests).
        for cmd in crate::cli::commands().into_iter().filter(|c| c.get_name() != "vecgrep") {
            let tool = cmd.get_name().to_string();
            for arg in cmd.get_arguments() {
                let Some(setting) = vecgrep::project::setting(arg.get_id().as_str()) else { continue };
                let mut argv = vec![tool.clone(), format!("--{}", arg.get_long().unwrap())];
                argv.extend(crate::cli::sample(arg));
                if cmd.get_positionals().next().is_some() {
                    argv.push("query".into());
                }
                let matches = cmd.clone().try_get_matches_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
                let values = cli_config(&matches).unwrap();
                assert!(values.sets(setting.key), "{argv:?} does not set {}", setting.key);
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(help.ends_with(&setting.help_note()), "{tool} --{}: {help}", setting.key);
                flagged.insert(setting.key);
            }
        }
        let file_only: Vec<&str> = SETTINGS.iter().map(|s| s.key).filter(|k| !flagged.contains(k)).collect();
        assert_eq!(file_only, ["embedder_timeout", "embedder_batch_size", "llm_timeout"], "settings no flag gives");
    }

    #[test]
    fn flags_that_are_not_settings_give_none() {
        let cmd = crate::app::command::<crate::cli::QueryCli>();
        let matches = cmd.try_get_matches_from(["vg-query", "--no-index", "-k", "3", "q"]).unwrap();
        let values = cli_config(&matches).unwrap();
        assert_eq!(values, ConfigValues { top_k: Some(3), ..Default::default() });
    }
}
