//! Progress on stderr (indicatif). Hidden when stderr is not a terminal, so piped or logged
//! output carries only results; results go to stdout, printed through [`ProgressBar::suspend`] so
//! a bar never tears a line.

use std::borrow::Cow;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// How often a bar redraws while a long step runs (its clock keeps moving).
const TICK: Duration = Duration::from_millis(200);
/// A spinner's line.
const SPINNER: &str = "{spinner} [{elapsed}] {msg}";
/// A bar's line.
const STEPS: &str = "{spinner} [{elapsed}] {bar:24} {pos}/{len} {msg}";

/// A spinner with `message`, for work whose length is unknown (loading or generating a graph).
pub fn spinner(message: impl Into<Cow<'static, str>>) -> ProgressBar {
    let style = ProgressStyle::with_template(SPINNER).unwrap_or_else(|_| ProgressStyle::default_spinner());
    let bar = ProgressBar::new_spinner().with_style(style).with_message(message);
    bar.enable_steady_tick(TICK);
    bar
}

/// A bar of steps whose number the work sets (`ProgressBar::set_length`) once it knows it,
/// naming the current step in its message.
pub fn steps(message: impl Into<Cow<'static, str>>) -> ProgressBar {
    let style = ProgressStyle::with_template(STEPS).unwrap_or_else(|_| ProgressStyle::default_bar());
    let bar = ProgressBar::no_length().with_style(style).with_message(message);
    bar.enable_steady_tick(TICK);
    bar
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_templates_parse() {
        // A template that failed to parse would fall back to indicatif's default silently.
        for template in [super::SPINNER, super::STEPS] {
            assert!(indicatif::ProgressStyle::with_template(template).is_ok(), "{template}");
        }
    }
}
