//! What the native commands (`train`, `prepare-data`, `bench`) share: their argument groups,
//! declared once with clap, and the progress they show while they work.

mod args;
mod progress;

pub use args::{ArchiveArg, BackendArg, RecipeArgs, SubsetArg};
pub use progress::{EpochProgress, counter};

/// Ends the command `name`: with exit code 1 and the message on stderr if it failed.
pub fn exit_on_error(name: &str, result: Result<(), String>) {
    if let Err(message) = result {
        eprintln!("{name}: {message}");
        std::process::exit(1);
    }
}
