//! "Did you mean": the closest known names to a misspelt one, and the one way errors and
//! warnings append them (`; did you mean a, b?`).

/// Up to three names from `candidates` closest to `name`: Jaro-Winkler similarity >= 0.7 and
/// within 0.05 of the best match.
pub fn closest_names(name: &str, candidates: &[&str]) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(name, c), *c))
        .filter(|(s, _)| *s >= 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    // Only names about as close as the best one: a clear typo gets one suggestion.
    let best = scored.first().map(|s| s.0).unwrap_or(0.0);
    scored
        .into_iter()
        .take_while(|(s, _)| *s >= best - 0.05)
        .take(3)
        .map(|(_, c)| c.to_string())
        .collect()
}

/// `; did you mean a, b?` naming `suggestions`, or nothing when there are none: the suffix of a
/// message about an unknown name.
pub fn format_suggestions(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", suggestions.join(", "))
    }
}

/// The "did you mean" suffix for `name` among `candidates` ([`closest_names`] formatted by
/// [`format_suggestions`]): empty when none is close.
pub fn did_you_mean(name: &str, candidates: &[&str]) -> String {
    format_suggestions(&closest_names(name, candidates))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_typo_gets_one_suggestion() {
        let names = ["min_len", "max_len", "text_key"];
        assert_eq!(closest_names("min_lenn", &names), ["min_len"]);
        assert_eq!(did_you_mean("min_lenn", &names), "; did you mean min_len?");
    }

    #[test]
    fn several_close_names_are_joined_with_commas() {
        assert_eq!(
            format_suggestions(&["a".to_string(), "b".to_string()]),
            "; did you mean a, b?"
        );
    }

    #[test]
    fn nothing_close_suggests_nothing() {
        assert_eq!(did_you_mean("zzzz", &["min_len", "max_len"]), "");
        assert_eq!(did_you_mean("min_len", &[]), "");
        assert_eq!(format_suggestions(&[]), "");
    }
}
