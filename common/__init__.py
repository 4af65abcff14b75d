"""What the sources and the consumers both read: the status model and the interlock's notions
of it, the trust check of files root reads, the seccomp confinement of the vendor CLI, and the
reading of the files an operator writes. It imports nothing else of the package (docs/layout.md,
the layers)."""
