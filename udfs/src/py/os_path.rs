//! Python's `os.path.abspath` and `os.path.join` on POSIX paths, as Data-Juicer resolves media
//! paths and the directories of the files its mappers write.

/// `os.path.abspath`: joined to the working directory and normalised lexically (`.` and `..`
/// collapsed, no symlinks resolved); none if the working directory is not readable as UTF-8.
pub fn abspath(path: &str) -> Option<String> {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        join(std::env::current_dir().ok()?.to_str()?, path)
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// `os.path.join(dir, path)` for a relative `path`.
pub fn join(dir: &str, path: &str) -> String {
    if dir.ends_with('/') || dir.is_empty() {
        format!("{dir}{path}")
    } else {
        format!("{dir}/{path}")
    }
}

/// `os.path.dirname`.
pub fn dirname(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) => "/",
        Some(i) => path[..i].trim_end_matches('/'),
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_and_normalise_as_python_does() {
        assert_eq!(abspath("/a/./b/../c").unwrap(), "/a/c");
        assert_eq!(join("/a", "b"), "/a/b");
        assert_eq!(join("/a/", "b"), "/a/b");
        assert_eq!(dirname("/a/b/c.mp4"), "/a/b");
        assert_eq!(dirname("/c.mp4"), "/");
        assert_eq!(dirname("c.mp4"), "");
    }
}
