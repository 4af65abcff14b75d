"""The endpoint's TLS and basic auth, from a web config file in the Prometheus
exporter-toolkit format, YAML or TOML with the same keys (docs/agent.md, "Web config"). Keys
of the toolkit this agent does not implement (cipher_suites, http_server_config, ...) are
refused, not ignored. Relative paths are relative to the file's directory.
"""

from __future__ import annotations

import os
import re
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, model_validator

from smartarray_agent.common.configfile import (
    ConfigError,
    FilePath,
    Settings,
    credentials_directory,
    handed_over,
    named_paths,
    read_document,
    refuse_untrusted,
    secret_problem,
    validate,
)
from smartarray_agent.exporter.auth import MAX_BCRYPT_COST, BasicAuth

_BCRYPT = re.compile(r"^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$")
_CLIENT_AUTH = {"NoClientCert": ssl.CERT_NONE, "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
                "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}
_VERSIONS = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}


class TlsServerConfig(Settings):
    cert_file: FilePath
    key_file: FilePath
    client_auth_type: Literal[
        "NoClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert"
    ] = "NoClientCert"
    client_ca_file: FilePath | None = None
    min_version: Literal["TLS12", "TLS13"] = "TLS12"
    max_version: Literal["TLS12", "TLS13"] = "TLS13"

    @model_validator(mode="after")
    def _versions_in_order(self) -> TlsServerConfig:
        if self.min_version > self.max_version:
            raise ValueError(f"min_version {self.min_version} is above max_version")
        return self


def _bcrypt_hash(value: str) -> str:
    if not (matched := _BCRYPT.match(value)):
        raise ValueError("not a bcrypt hash ($2y$10$... from 'htpasswd -nBC 10 \"\" | tr -d :'); "
                         "plain passwords are not accepted")
    cost = int(matched[1])
    if not 4 <= cost <= MAX_BCRYPT_COST:
        why = "bcrypt takes 4 to 31" if not 4 <= cost <= 31 else "a login could take over a second"
        raise ValueError(f"bcrypt cost {cost}: {why}; make the hash with a cost of 4 to "
                         f"{MAX_BCRYPT_COST} ('htpasswd -nBC 10 \"\" | tr -d :')")
    return value


class WebConfig(Settings):
    tls_server_config: TlsServerConfig | None = None
    basic_auth_users: dict[str, Annotated[str, AfterValidator(_bcrypt_hash)]] = {}


@dataclass(frozen=True)
class WebSecurity:
    tls: ssl.SSLContext | None = None
    auth: BasicAuth | None = None


def load_web_config(path: Path) -> WebSecurity:
    """TLS context and basic auth from ``path``; ConfigError names the file, line and key."""
    problem = secret_problem(path)  # it holds the password hashes
    if problem is not None:
        raise ConfigError([f"{path}: refused: {problem}"])
    document = read_document(path)
    config = validate(document, WebConfig)
    tls = None
    if config.tls_server_config is not None:
        # Handed over by systemd (LoadCredential=), each file is among the credentials under
        # its own name: the unprivileged serve cannot read root's key where it lies.
        handed = path.parent == credentials_directory()
        named = [(key, handed_over(file) if handed else file)
                 for key, file in named_paths(config)]
        if os.geteuid() == 0:  # as root, the key and certificates out of others' reach too
            refuse_untrusted(document, named)
        files = {key[-1]: file for key, file in named}
        if (problem := secret_problem(files["key_file"])) is not None:
            raise ConfigError([document.problem(("tls_server_config", "key_file"),
                                                f"refused: {problem}")])
        try:
            tls = _tls_context(config.tls_server_config, files)
        except (OSError, ssl.SSLError, ValueError) as error:
            location = ("tls_server_config", "cert_file")
            raise ConfigError([document.problem(location, f"cannot use it: {error}")]) from None
    return WebSecurity(tls, BasicAuth(config.basic_auth_users) if config.basic_auth_users else None)


def _tls_context(tls: TlsServerConfig, files: dict[str, Path]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = _VERSIONS[tls.min_version]
    context.maximum_version = _VERSIONS[tls.max_version]
    context.load_cert_chain(files["cert_file"], files["key_file"])
    if "client_ca_file" in files:
        context.load_verify_locations(cafile=files["client_ca_file"])
    elif tls.client_auth_type != "NoClientCert":
        raise ValueError(f"client_auth_type {tls.client_auth_type} needs client_ca_file")
    context.verify_mode = _CLIENT_AUTH[tls.client_auth_type]
    return context
