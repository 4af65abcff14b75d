"""[redfish] settings and the credentials file: defaults, refusals, clear messages."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from smartarray_agent.collectors.redfish.credentials import CredentialsError, load_credentials
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.config import ConfigError, load_config

from .redfish_ilo import PASSWORD, USER, credentials_file


def make(tmp_path, **values) -> RedfishSettings:
    return RedfishSettings.model_validate({"address": "ilo.example.net",
                                           "credentials_file": str(credentials_file(tmp_path)),
                                           **values})


def problems(tmp_path, **values) -> str:
    """What the agent's configuration loader says of a [redfish] table with ``values``."""
    values = {"address": "ilo.example.net", "credentials_file": credentials_file(tmp_path),
              **values}
    path = tmp_path / "agent.toml"
    path.write_text("[redfish]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in values.items()))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return str(caught.value)


def _toml(value) -> str:
    return str(value) if isinstance(value, int | float) else f'"{value}"'


def test_defaults(tmp_path):
    settings = make(tmp_path)
    assert (settings.host, settings.port, settings.verify_tls, settings.ca_file) == (
        "ilo.example.net", 443, True, None)
    assert (settings.connect_timeout_s, settings.read_timeout_s) == (5.0, 30.0)
    assert (settings.interval_s, settings.max_age_s) == (300.0, 900.0)


@pytest.mark.parametrize(
    ("address", "host", "port"),
    [("16.1.15.1", "16.1.15.1", 443), ("https://ilo-db1:8443/", "ilo-db1", 8443),
     ("[fe80::1]:443", "fe80::1", 443)],
)
def test_address_forms(tmp_path, address, host, port):
    settings = make(tmp_path, address=address)
    assert (settings.host, settings.port) == (host, port)


@pytest.mark.parametrize(
    ("address", "message"),
    [("http://ilo", "only https"), ("https://admin:pw@ilo", "credentials_file, not here"),
     ("ilo/redfish/v1", "no path"), ("ilo:99999", "port"), ("", "no host")],
)
def test_bad_addresses(tmp_path, address, message):
    assert message in problems(tmp_path, address=address)


def test_unknown_keys_are_rejected(tmp_path):
    assert "agent.toml:4: redfish.passwd: unknown key" in problems(tmp_path, passwd="x")


def test_a_charge_must_live_longer_than_the_interval(tmp_path):
    message = problems(tmp_path, interval_s=600, max_age_s=300)
    assert "max_age_s (300) must be at least interval_s (600)" in message


def test_credentials_file_open_to_group_is_refused(tmp_path):
    credentials_file(tmp_path, mode=0o640)
    path = tmp_path / "ilo-credentials.toml"
    with pytest.raises(ValidationError) as caught:
        RedfishSettings.model_validate({"address": "ilo", "credentials_file": str(path)})
    assert (
        f"credentials file {path} holds a secret and its group or others may read it (mode "
        f"0640; chmod 600 {path})"
    ) in str(caught.value)


def test_missing_credentials_file_and_ca_file(tmp_path):
    message = problems(tmp_path, credentials_file=tmp_path / "nope", ca_file=tmp_path / "ca.pem")
    assert f"credentials file {tmp_path / 'nope'} does not exist" in message
    assert f"CA file {tmp_path / 'ca.pem'} does not exist" in message


def test_credentials_are_read_and_never_shown(tmp_path):
    credentials = load_credentials(credentials_file(tmp_path))
    assert (credentials.username, credentials.password) == (USER, PASSWORD)
    assert PASSWORD not in repr(credentials)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f'username = "{USER}"\n', "password must be a non-empty string"),
        (f'username = "{USER}"\npassword = "{PASSWORD}"\nrealm = "x"\n', "unknown key(s) realm"),
        (f'username = {USER}\npassword = "{PASSWORD}"\n', "is not TOML of the form"),
    ],
)
def test_bad_credentials_files(tmp_path, text, message):
    path = credentials_file(tmp_path)
    path.write_text(text)
    with pytest.raises(CredentialsError) as caught:
        load_credentials(path)
    assert message in str(caught.value) and PASSWORD not in str(caught.value)


def test_the_agent_configuration_carries_the_redfish_table(tmp_path):
    credentials_file(tmp_path)
    path = tmp_path / "agent.toml"
    path.write_text('[redfish]\naddress = "16.1.15.1"\ncredentials_file = "ilo-credentials.toml"\n'
                    "interval_s = 60\nmax_age_s = 180\n")
    settings = load_config(path).redfish
    assert (settings.address, settings.interval_s, settings.max_age_s) == ("16.1.15.1", 60, 180)
    assert settings.credentials_file == tmp_path / "ilo-credentials.toml"  # relative to the file


def test_without_the_table_nothing_reads_the_ilo(tmp_path):
    path = tmp_path / "agent.toml"
    path.write_text("[ssacli]\n")
    assert load_config(path).redfish is None


def test_a_missing_key_names_its_table(tmp_path):
    path = tmp_path / "agent.toml"
    path.write_text('[redfish]\naddress = "ilo"\n')
    with pytest.raises(ConfigError, match="redfish.credentials_file: required but not given"):
        load_config(path)
