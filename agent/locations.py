"""Where the agent's own files are by default. Plain strings in a module that imports
nothing, so a command's ``--help`` names them without loading what reads them."""

CONFIG_FILE = "/etc/smartarray-agent/config.toml"
AUDIT_FILE = "/var/lib/smartarray-agent/audit.jsonl"
