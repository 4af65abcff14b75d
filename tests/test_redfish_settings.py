"""[redfish] settings and the credentials file: defaults, refusals, clear messages."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from smartarray_agent.collectors.redfish.credentials import CredentialsError, load_credentials
from smartarray_agent.collectors.redfish.settings import (
    RedfishSettings,
    SettingsError,
    describe,
    load_settings,
)

from .redfish_ilo import PASSWORD, USER, credentials_file


def make(tmp_path, **values) -> RedfishSettings:
    return RedfishSettings.model_validate(
        {"address": "ilo.example.net", "credentials_file": credentials_file(tmp_path), **values}
    )


def problems(tmp_path, **values) -> str:
    with pytest.raises(ValidationError) as caught:
        make(tmp_path, **values)
    return describe(caught.value)


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
    assert "passwd: Extra inputs are not permitted" in problems(tmp_path, passwd="x")


def test_a_charge_must_live_longer_than_the_interval(tmp_path):
    message = problems(tmp_path, interval_s=600, max_age_s=300)
    assert "max_age_s (300) must be at least interval_s (600)" in message


def test_credentials_file_open_to_group_is_refused(tmp_path):
    credentials_file(tmp_path, mode=0o640)
    path = tmp_path / "ilo-credentials.toml"
    with pytest.raises(ValidationError) as caught:
        RedfishSettings(address="ilo", credentials_file=path)
    assert describe(caught.value) == (
        f"credentials_file: credentials file {path} has mode 0640: group or others may access "
        f"it; it must be readable only by root (chmod 600 {path})"
    )


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


def test_load_settings_from_a_toml_file(tmp_path):
    creds = credentials_file(tmp_path)
    path = tmp_path / "agent.toml"
    path.write_text(f'[redfish]\naddress = "16.1.15.1"\ncredentials_file = "{creds}"\n'
                    f"interval_s = 60\nmax_age_s = 180\n")
    settings = load_settings(path)
    assert (settings.address, settings.interval_s, settings.max_age_s) == ("16.1.15.1", 60, 180)


@pytest.mark.parametrize(
    ("text", "message"),
    [("[ssacli]\n", "has no [redfish] table"), ("[redfish\n", "is not valid TOML"),
     ('[redfish]\naddress = "ilo"\n', "[redfish]: credentials_file: Field required")],
)
def test_load_settings_errors_are_one_line(tmp_path, text, message):
    path = tmp_path / "agent.toml"
    path.write_text(text)
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)
