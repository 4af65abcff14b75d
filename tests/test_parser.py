"""Parser behaviour on text written by the project from the format facts (FACTS.md)."""

from __future__ import annotations

import pytest

from smartarray_agent.collectors.ssacli.parser import ParseError, parse
from smartarray_agent.common.model import normalise_status

GEN8_DETAIL = """
Smart Array P420i in Slot 0 (Embedded)
   Bus Interface: PCI
   Slot: 0
   Serial Number: PSERIAL0001
   Controller Status: OK
   Firmware Version: 8.32
   Cache Board Present: True
   Cache Status: Temporarily Disabled
   Cache Status Details: Cache disabled; battery/capacitor charge is low.
   Cache Ratio: 10% Read / 90% Write
   Drive Write Cache: Disabled
   Total Cache Size: 1.0
   No-Battery Write Cache: Enabled
   Cache Backup Power Source: Capacitors
   Battery/Capacitor Count: 1
   Battery/Capacitor Status: Recharging
   Capacitor Temperature  (C): 25

   Array: A
      Interface Type: SAS
      Status: OK

      Logical Drive: 1
         Size: 279.4 GB
         Fault Tolerance: 1
         Status: OK
         Caching:  Enabled
         Disk Name: /dev/sda          Mount Points: /boot 512 MB
         Mirror Group 1:
            physicaldrive 1I:1:1 (port 1I:box 1:bay 1, SAS HDD, 300 GB, OK)
         Mirror Group 2:
            physicaldrive 1I:1:2 (port 1I:box 1:bay 2, SAS HDD, 300 GB, OK)

      physicaldrive 1I:1:1
         Port: 1I
         Box: 1
         Bay: 1
         Status: OK
         Interface Type: SAS HDD
         Size: 300 GB
      physicaldrive 1I:1:2
         Port: 1I
         Box: 1
         Bay: 2
         Status: Failed
         Interface Type: SAS HDD
         Size: 300 GB

   unassigned

      physicaldrive 1I:1:3
         Port: 1I
         Box: 1
         Bay: 3
         Status: OK
"""


def test_gen8_detail_reads_cache_backup_power_and_drives():
    ctrl = parse(GEN8_DETAIL).controllers[0]
    assert (ctrl.slot, ctrl.model, ctrl.embedded) == ("0", "Smart Array P420i", True)
    assert ctrl.cache.status == "temporarily_disabled"
    assert ctrl.cache.status_details == "Cache disabled; battery/capacitor charge is low."
    assert ctrl.cache.size_bytes == 2**30
    assert (ctrl.cache.read_percent, ctrl.cache.write_percent) == (10, 90)
    assert ctrl.cache.no_battery_write_cache is True
    assert ctrl.cache.drive_write_cache is False
    power = ctrl.backup_power
    assert (power.source, power.count, power.status) == ("capacitors", 1, "recharging")
    assert ctrl.temperatures.capacitor_c == 25
    assert [d.drive_id for d in ctrl.physical_drives] == ["1I:1:1", "1I:1:2", "1I:1:3"]
    assert [d.status for d in ctrl.physical_drives] == ["ok", "failed", "ok"]
    assert [d.array for d in ctrl.physical_drives] == ["A", "A", "unassigned"]
    (ld,) = ctrl.logical_drives
    assert (ld.drive_id, ld.array, ld.caching, ld.disk_name) == ("1", "A", True, "/dev/sda")
    assert ("Mount Points", "/boot 512 MB") in ld.raw


def test_a_drive_printed_three_times_is_one_drive_with_merged_fields():
    ctrl = parse(GEN8_DETAIL).controllers[0]
    drive = ctrl.physical_drives[0]
    assert (drive.port, drive.box, drive.bay, drive.interface) == ("1I", "1", "1", "SAS HDD")
    assert drive.size_bytes == 300 * 10**9


@pytest.mark.parametrize(
    "variant",
    [
        pytest.param(lambda t: t.replace("\n", "\r\n"), id="crlf"),
        pytest.param(lambda t: "\n".join(line + "   " for line in t.split("\n")), id="trailing"),
        pytest.param(lambda t: "\n".join("    " + line for line in t.split("\n")), id="indented"),
        pytest.param(lambda t: "root@host:~# ssacli ctrl all show config detail\n" + t
                     + "\nroot@host:~# ", id="shell-prompts"),
        pytest.param(lambda t: "Smart Storage Administrator CLI 3.10.3.0\n"
                     "Detecting Controllers...Done.\n"
                     'Type "help" for a list of supported commands.\n'
                     'Type "exit" to close the console.\n\n=> ctrl all show config detail\n'
                     + t + "\n=> ", id="console-transcript"),
    ],
)
def test_paste_artifacts_do_not_change_the_result(variant):
    assert parse(variant(GEN8_DETAIL)).controllers == parse(GEN8_DETAIL).controllers


def test_console_transcript_keeps_the_cli_version():
    text = "HP Smart Storage Administrator CLI 2.10.14.0\n=> ctrl all show\n\n" + \
        "Smart Array P420i in Slot 0 (Embedded)    (sn: 5001438025E9D500)\n"
    snapshot = parse(text)
    assert snapshot.cli_version == "2.10.14.0"
    assert snapshot.controllers[0].serial == "5001438025E9D500"


def test_old_labels_accelerator_ratio_and_battery_status():
    text = """
Smart Array 6i in Slot 0 (Embedded)
   Controller Status: OK
   Cache Status: OK
   Accelerator Ratio: 50% Read / 50% Write
   Total Cache Size: 192 MB
   Battery Status: OK
"""
    ctrl = parse(text).controllers[0]
    assert (ctrl.cache.read_percent, ctrl.cache.write_percent) == (50, 50)
    assert ctrl.cache.size_bytes == 192 * 2**20
    assert ctrl.backup_power.status == "ok"


def test_gen10_prefix_policies_sensors_and_mixed_mode():
    text = """
HPE Smart Array P816i-a SR Gen10 in Slot 0 (Embedded)
   Controller Status: OK
   Cache Status: OK
   Configured Drive Write Cache Policy: Enable
   Unconfigured Drive Write Cache Policy: Default
   HBA Drive Write Cache Policy: Disable
   Total Cache Size: 4.0
   Battery Backed Cache Size: 3.8
   Cache Backup Power Source: Batteries
   Battery/Capacitor Count: 1
   Battery/Capacitor Status: Failed (Replace Batteries)
   Controller Mode: Mixed
   Sensor ID: 0
      Location: Inlet Ambient
      Current Value (C): 40
      Max Value Since Power On: 42
"""
    ctrl = parse(text).controllers[0]
    assert ctrl.model == "HPE Smart Array P816i-a SR Gen10"
    assert ctrl.mode == "mixed"
    policy = ctrl.cache.drive_write_cache_policy
    assert (policy.configured, policy.unconfigured, policy.hba) == ("enable", "default", "disable")
    assert ctrl.cache.drive_write_cache is None
    assert ctrl.cache.size_bytes == 4 * 2**30
    assert ctrl.backup_power.status == "failed"
    assert ctrl.backup_power.status_text == "Failed (Replace Batteries)"
    (sensor,) = ctrl.temperatures.sensors
    assert (sensor.location, sensor.current_c, sensor.max_since_power_on_c) == (
        "Inlet Ambient", 40, 42)


def test_header_forms_slot_0b_external_array_and_modes():
    text = """
Dynamic Smart Array B140i in Slot 0b
   Controller Status: OK

MSA1500 CS in MY STORAGE
   Controller Status: OK

Smart Array P840 in Slot 1 (HBA Mode)
   Controller Status: OK

Smart HBA H240ar in Slot 0 (Embedded) (RAID Mode)
   Controller Status: OK
"""
    ctrls = parse(text).controllers
    assert [(c.model, c.slot, c.mode) for c in ctrls] == [
        ("Dynamic Smart Array B140i", "0b", None),
        ("MSA1500 CS", None, None),
        ("Smart Array P840", "1", "hba"),
        ("Smart HBA H240ar", "0", "raid"),
    ]
    assert [c.location for c in ctrls] == [None, "MY STORAGE", None, None]


def test_notice_after_header_is_kept_and_fields_still_read():
    text = """
Smart Array P410 in Slot 1

CACHE STATUS PROBLEM DETECTED: The cache on this controller has a problem.
                               To prevent data loss, configuration changes to
                               this controller are not allowed.

   Controller Status: OK
   Cache Status: Permanently Disabled
"""
    ctrl = parse(text).controllers[0]
    assert ctrl.notices[0].startswith("CACHE STATUS PROBLEM DETECTED: The cache")
    assert "configuration changes to this controller" in ctrl.notices[0]
    assert ctrl.cache.status == "permanently_disabled"


def test_wrapped_value_is_joined_to_its_key():
    text = """
Smart Array P420i in Slot 0 (Embedded)
   Cache Status: Temporarily Disabled
   Cache Status Details: Cache disabled; backup power source failed to charge
                         to an acceptable level
   Cache Ratio: 10% Read / 90% Write
"""
    cache = parse(text).controllers[0].cache
    assert cache.status_details == (
        "Cache disabled; backup power source failed to charge to an acceptable level")
    assert cache.read_percent == 10


def test_unknown_lines_are_kept_not_fatal():
    text = """
Smart Array P410i in Slot 0 (Embedded)
   Controller Status: OK
   Some Future Field: 42
   Cache Status: OK
"""
    ctrl = parse(text).controllers[0]
    assert ("Some Future Field", "42") in ctrl.raw
    assert ctrl.cache.status == "ok"


@pytest.mark.parametrize(
    ("text", "message", "kind"),
    [
        ("\nError: No controllers detected.\n", "No controllers detected.", "no_controllers"),
        ("\nError: Another instance of ACU is already running. Please terminate it first.\n",
         "Another instance of ACU is already running. Please terminate it first.",
         "lock_conflict"),
        ('\nError: Syntax error at "force"\n', 'Syntax error at "force"', "syntax_error"),
        ('\nError: "raid=1" is not a valid option for array A\n\nAvailable options are:\n'
         "       0\n", '"raid=1" is not a valid option for array A', "invalid_option"),
        ("\nError: The specified device does not have any logical drives.\n",
         "The specified device does not have any logical drives.", "no_logical_drives"),
    ],
)
def test_vendor_errors_are_typed(text, message, kind):
    error = parse(text).error
    assert (error.message, error.kind) == (message, kind)


def test_wrapped_error_keeps_its_detail_lines():
    text = ("\nError: No controllers detected. Possible causes:\n"
            "        - On LINUX, the scsi_generic (sg) driver module is not loaded.\n")
    error = parse(text).error
    assert error.detail == ["- On LINUX, the scsi_generic (sg) driver module is not loaded."]


@pytest.mark.parametrize(
    "text",
    ["", "   \n\n", "hello world\n", "<html><body>502 Bad Gateway</body></html>",
     "key: value\nother: thing\n", "\x00\x01\x02garbage"],
)
def test_text_that_is_not_cli_output_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize(
    ("printed", "normal"),
    [("Failed (Replace Batteries)", "failed"), ("Temporarily Disabled", "temporarily_disabled"),
     ("OK", "ok"), ("Not Configured", "not_configured"), ("", None), (None, None)],
)
def test_status_normalisation(printed, normal):
    assert normalise_status(printed) == normal


def test_an_unindented_warning_after_the_header_is_a_notice():
    text = """Smart Array P410i in Slot 0 (Embedded)
Warning: Unrecoverable Media Errors Detected on Drives during previous Rebuild or
Data Copy. To identify the logical drives with unrecoverable media errors, check
the "Unrecoverable Media Errors" field of the logical drives and consult the
documentation.
   Bus Interface: PCI
   Controller Status: OK
   Cache Status: OK
"""
    ctrl = parse(text).controllers[0]
    assert len(ctrl.notices) == 1 and ctrl.notices[0].endswith("consult the documentation.")
    assert (ctrl.status, ctrl.cache.status) == ("ok", "ok")
    assert ("Bus Interface", "PCI") in ctrl.raw


DRIVES_IN_MOTION = """
Smart Array P840 in Slot 1
   Controller Status: OK
   PCI Address (Domain:Bus:Device.Function): 0000:0B:00.0

   Array A
      logicaldrive 1 (558.9 GB, RAID 1, Recovering, 54.28% complete)
      logicaldrive 2 (1.1 TB, RAID 5, Transforming, 7.50% complete)
      logicaldrive 3 (1.1 TB, RAID 5, Expanding, 12.00% complete)
      logicaldrive 4 (1.1 TB, RAID 5, Queued for Expansion)
      logicaldrive 5 (1.1 TB, RAID 1+0, Ready for Rebuild)

   Array: B
      Logical Drive: 6
         Size: 279.4 GB
         Fault Tolerance: 1
         Status: Rebuilding, 3.10% complete

   unassigned
      physicaldrive 1I:1:1 (port 1I:box 1:bay 1, SAS HDD, 300 GB, OK, spare)
      physicaldrive 1I:1:2 (port 1I:box 1:bay 2, SAS HDD, 300 GB, OK, active spare for 1I:3:3)
      physicaldrive 1I:1:3
         Status: Erase In Progress
         Model: ATA     MK000500GWEZH
         Erase Percent Complete: 66%
         Current Temperature (C): 21
         Maximum Temperature (C): 34
         Usage remaining: -49.95%
         Power On Hours: 43646
         Estimated Life Remaining based on workload to date: 0 days
         SSD Smart Trip Wearout: False
      physicaldrive 1I:1:4
         Status: Erase Complete. Reenable Before Using.
         SSD Smart Trip Wearout: Not Supported
      physicaldrive 1I:1:5
         Status: Failed
         Last Failure Reason: Timeout
      physicaldrive 1I:1:6
         Status: Cable Error
"""


def test_logical_drives_in_motion_keep_their_state_word_and_progress():
    ctrl = parse(DRIVES_IN_MOTION).controllers[0]
    assert [(d.drive_id, d.status, d.progress_percent) for d in ctrl.logical_drives] == [
        ("1", "recovering", 54.28), ("2", "transforming", 7.5), ("3", "expanding", 12.0),
        ("4", "queued_for_expansion", None), ("5", "ready_for_rebuild", None),
        ("6", "rebuilding", 3.1),
    ]
    first = ctrl.logical_drives[0]
    assert (first.raid, first.status_text) == ("RAID 1", "Recovering, 54.28% complete")


def test_physical_drive_states_wear_and_hours():
    drives = {d.drive_id: d for d in parse(DRIVES_IN_MOTION).controllers[0].physical_drives}
    assert {k: d.status for k, d in drives.items()} == {
        "1I:1:1": "ok", "1I:1:2": "ok", "1I:1:3": "erase_in_progress",
        "1I:1:4": "erase_complete", "1I:1:5": "failed", "1I:1:6": "cable_error",
    }
    erasing = drives["1I:1:3"]
    assert erasing.progress_percent == 66.0
    assert erasing.usage_remaining_percent == -49.95  # past rated endurance: not clamped
    assert (erasing.power_on_hours, erasing.estimated_life_remaining_days) == (43646, 0)
    assert (erasing.temperature_c, erasing.max_temperature_c) == (21.0, 34.0)
    assert erasing.ssd_smart_trip_wearout is False
    unsupported = drives["1I:1:4"]  # wear not readable: null, never 0
    assert (unsupported.usage_remaining_percent, unsupported.power_on_hours,
            unsupported.ssd_smart_trip_wearout, unsupported.progress_percent) == (
        None, None, None, None)
    assert drives["1I:1:5"].failure_reason == "Timeout"
    assert drives["1I:1:2"].status_text == "OK, active spare for 1I:3:3"


def test_pci_address_is_lower_case_like_sysfs():
    assert parse(DRIVES_IN_MOTION).controllers[0].pci_address == "0000:0b:00.0"
    assert parse(GEN8_DETAIL).controllers[0].pci_address is None
