"""World packages: pack worlds of any kind with a manifest and one digest, push them to and pull them from OCI
registries, git repositories and the Hugging Face Hub, install them by digest once the sandbox validated them, and
cite them in every result (``--worlds REF``)."""
