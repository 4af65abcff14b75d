// The alert rules: prometheusAlerts, written to packaging/prometheus/alerts.yml by generate.py
// with alertsHeader as its opening comment. The thresholds, the job selector and the runbook
// addresses come from _config (mixin.libsonnet).
//
// A description is written over several lines here and folded into one, as YAML's `>-` would.
local fold(text) = std.join(' ', std.split(std.rstripChars(text, '\n'), '\n'));

{
  local c = $._config,
  local runbook(alert) = c.runbookURLPattern % std.asciiLower(alert),
  // The recharge window's figures, for the rule's expression and its text.
  local recharge = {
    hours: c.backupPowerRechargeHours,
    ratio: c.backupPowerRechargeRatio,
    percent: std.round(100 * c.backupPowerRechargeRatio),
  },
  local wear = {
    low: c.ssdWearLowRatio,
    critical: c.ssdWearCriticalRatio,
    trend: c.ssdWearTrendDays,
    horizon: c.ssdWearHorizonDays,
    lowPercent: std.round(100 * c.ssdWearLowRatio),
  },

  alertsHeader:: |||
    Prometheus alerting rules for smartarray-agent (HP/HPE Smart Array write cache and backup
    power). Load this file from prometheus.yml (rule_files:). Tests: packaging/prometheus/tests/,
    run with `promtool test rules packaging/prometheus/tests/*.yml`. Pair it with
    alertmanager.yml (inhibit rules: one page per problem).

    Generated from the monitoring mixin (packaging/mixin, installed in
    /usr/share/smartarray-agent/mixin): change a setting there and regenerate rather than edit
    this file (docs/packaging.md, "The mixin").

    Every series of a controller carries `controller`: its slot ("0", "3"), or "sn:<serial>" for
    a controller without one. The commands in the descriptions use a slot; for "sn:" controllers
    use `ssacli ctrl serialnumber=<serial> ...` instead.

    Timings: the agent collects once a minute by default (collect.interval_s), so `for: 1m` means
    two collections in a row agree. The recharge limit is SmartArrayBackupPowerRechargingTooLong's
    window (recharging more than %(rechargePercent)d%% of the last %(backupPowerRechargeHours)dh): the mixin's
    backupPowerRechargeHours and backupPowerRechargeRatio.

    Scrape gaps: the hardware alerts read `last_over_time(...[1h])`, the last value collected in
    the past hour, so a failed battery keeps paging for an hour after the agent dies or its
    target goes away (and SmartArrayAgentDown pages meanwhile), while a repair resolves the alert
    at the next collection. (`keep_firing_for`, Prometheus >= 2.42, would also delay the
    resolution after a repair.)

    The agent's scrape job: SmartArrayAgentDown and SmartArrayAgentAbsent select
    `%(jobSelector)s` (the mixin's agentJob, or jobSelector). In textfile mode (node_exporter
    reads smartarray.prom) there is no such job: delete those two rules; SmartArrayTextfileStale
    covers that mode. SmartArrayProbeFailing and SmartArrayProbeSnapshotStale (an answer from a
    read older than %(probeStaleSeconds)d s, the mixin's probeStaleSeconds) select the /probe job,
    `%(probeSelector)s` (the mixin's probeJob): iLOs read by an agent's serve for hosts without
    one. SmartArrayAgentAbsent pages when the agent job has no target now but had some in the
    last %(agentAbsentLookback)s (the mixin's agentAbsentLookback), or when neither job has any:
    a fleet that loses its agent job pages though its probes answer, and one watched by probes
    alone, never scraping an agent, does not.

    Runbooks: each alert's runbook_url is its entry in docs/runbooks.md, by the mixin's
    runbookURLPattern (%(runbookURLPattern)s).
    The same runbooks are installed as /usr/share/smartarray-agent/runbooks.md.
  ||| % (c { rechargePercent: std.round(100 * c.backupPowerRechargeRatio) }),

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'smartarray-backup-power',
        rules: [
          {
            alert: 'SmartArrayBackupPowerFailed',
            expr: 'last_over_time(smartarray_backup_power_status{state="failed"}[1h]) == 1',
            'for': '1m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array cache backup power failed on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                The battery or capacitor that protects the write cache of controller
                {{ $labels.controller }} on {{ $labels.instance }} reports Failed. The controller has
                turned its write cache off, so small synchronous writes (databases, fsync-heavy jobs)
                are now many times slower; if no-battery write cache was forced on,
                SmartArrayUnprotectedWriteCache fires too and the data is at risk.
                To do: confirm with `ssacli ctrl slot={{ $labels.controller }} show detail`
                ("Battery/Capacitor Status"), open a hardware case and replace the pack (the Smart
                Storage Battery on Gen9/Gen10, the BBWC battery or FBWC capacitor on older servers).
                Do not force write cache on (nobatterywritecache=enable) to win the speed back.
              |||),
              runbook_url: runbook('SmartArrayBackupPowerFailed'),
            },
          },
          {
            alert: 'SmartArrayBackupPowerRechargingTooLong',
            expr: |||
              avg_over_time(smartarray_backup_power_status{state="recharging"}[%(hours)dh]) > %(ratio)g
              and present_over_time(smartarray_backup_power_status{state="recharging"}[15m] offset %(hours)dh)
            ||| % recharge,
            'for': '1m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array cache backup power mostly recharging for %(hours)dh on {{ $labels.instance }}, controller {{ $labels.controller }}' % recharge,
              description: fold(|||
                The cache battery or capacitor of controller {{ $labels.controller }} on
                {{ $labels.instance }} has reported Recharging for more than %(percent)d%% of the last %(hours)d hours
                (now {{ $value | humanizePercentage }}), in one stretch or falling back to it between
                brief OK readings. A healthy pack recharges within a few hours of a power-on; one that
                does not is wearing out. While it recharges the controller keeps its write cache off
                (slow writes).
                To do: check the pack's status and the cache status details with `ssacli ctrl
                slot={{ $labels.controller }} show detail`, look for a failed or missing cable in the
                IML/iLO log, and plan a replacement of the pack if it stays in Recharging. (The
                %(hours)dh window and the %(percent)d%% are backupPowerRechargeHours and
                backupPowerRechargeRatio in the monitoring mixin; the `offset %(hours)dh` part waits
                for %(hours)d hours of history, so a new host does not alert early.)
              ||| % recharge),
              runbook_url: runbook('SmartArrayBackupPowerRechargingTooLong'),
            },
          },
          {
            alert: 'SmartArrayBackupPowerStatusUnknown',
            expr: 'last_over_time(smartarray_backup_power_status{state="other"}[1h]) == 1',
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array backup power in an unknown state on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                The vendor CLI prints a status for the backup power of controller
                {{ $labels.controller }} on {{ $labels.instance }} that this agent does not know:
                "{{ with printf `smartarray_backup_power_status_info{instance="%s",controller="%s"}` $labels.instance $labels.controller | query }}{{ . | first | label "word" }}{{ else }}not
                exported{{ end }}". Unknown is never taken for healthy: the write-cache interlock
                treats it as below threshold, and this alert stays until the word is understood.
                To do: read "Battery/Capacitor Status" in `ssacli ctrl slot={{ $labels.controller }}
                show detail` and the IML (iLO); treat the pack as failed until proven otherwise (keep
                forced write cache off), and report the word to the smartarray-agent project so the
                next version knows it.
              |||),
              runbook_url: runbook('SmartArrayBackupPowerStatusUnknown'),
            },
          },
        ],
      },
      {
        name: 'smartarray-cache',
        rules: [
          {
            alert: 'SmartArrayUnprotectedWriteCache',
            expr: 'last_over_time(smartarray_unprotected_write_cache[1h]) == 1',
            'for': '1m',
            labels: { severity: 'critical' },
            annotations: {
              summary: 'Smart Array write cache is not protected by backup power on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                Controller {{ $labels.controller }} on {{ $labels.instance }} can hold written data in
                its cache that no healthy battery or capacitor protects (usually no-battery write
                cache forced on, or drive write cache on, while the backup power is failed, missing,
                recharging or low). A power cut or a crash now loses writes the operating system was
                told were done: databases and file systems can be corrupted.
                To do now: turn the unprotected cache off - `smartarray-agent write-cache disable
                --what no-battery --slot {{ $labels.controller }}` (and `--what drive` if drive write
                cache is on), then restore the backup power (see SmartArrayBackupPowerFailed). Turn it
                back on only once the backup power is OK.
              |||),
              runbook_url: runbook('SmartArrayUnprotectedWriteCache'),
            },
          },
          {
            alert: 'SmartArrayCacheDisabled',
            expr: |||
              last_over_time(smartarray_cache_status{state=~"temporarily_disabled|permanently_disabled"}[1h]) == 1
              unless on (instance, job, controller)
                last_over_time(smartarray_backup_power_status{state="recharging"}[1h]) == 1
            |||,
            'for': '15m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array cache {{ $labels.state }} on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                The cache of controller {{ $labels.controller }} on {{ $labels.instance }} has been
                {{ $labels.state }} for 15 minutes: reads and writes bypass it and the storage is much
                slower. "temporarily_disabled" usually means the backup power is low or recharging;
                "permanently_disabled" means a cache module or backup power fault.
                To do: read the reason in "Cache Status Details" of `ssacli ctrl
                slot={{ $labels.controller }} show detail`; fix the backup power (battery/capacitor
                alerts) or reseat/replace the cache module. After a power-on a temporary disable
                clears by itself once the pack has recharged.
              |||),
              runbook_url: runbook('SmartArrayCacheDisabled'),
            },
          },
          {
            alert: 'SmartArrayWriteCacheInactive',
            expr: |||
              last_over_time(smartarray_cache_ratio{op="write"}[1h]) > 0
              and on (instance, job, controller) last_over_time(smartarray_write_cache_active[1h]) == 0
              unless on (instance, job, controller)
                last_over_time(smartarray_backup_power_status{state="recharging"}[1h]) == 1
            |||,
            'for': '15m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array write cache configured but inactive on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                Controller {{ $labels.controller }} on {{ $labels.instance }} gives
                {{ $value | humanizePercentage }} of its cache to writes, but has not been caching
                writes for 15 minutes, so writes run at disk speed. The usual cause is backup power
                that is failed, missing or recharging (the controller turns write cache off to keep
                data safe); a disabled cache or caching turned off per logical drive are others.
                To do: run `smartarray-agent status` and `ssacli ctrl slot={{ $labels.controller }}
                show config detail` to see which: restore the backup power, or re-enable caching on
                the logical drives. Do not force it with no-battery write cache.
              |||),
              runbook_url: runbook('SmartArrayWriteCacheInactive'),
            },
          },
          {
            alert: 'SmartArrayCacheStatusUnknown',
            expr: 'last_over_time(smartarray_cache_status{state="other"}[1h]) == 1',
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array cache in an unknown state on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                The vendor CLI prints a status for the cache of controller {{ $labels.controller }} on
                {{ $labels.instance }} that this agent does not know:
                "{{ with printf `smartarray_cache_status_info{instance="%s",controller="%s"}` $labels.instance $labels.controller | query }}{{ . | first | label "word" }}{{ else }}not
                exported{{ end }}". Unknown is never taken for healthy: the write-cache interlock
                treats it as below threshold, and this alert stays until the word is understood.
                To do: read "Cache Status" and "Cache Status Details" in `ssacli ctrl
                slot={{ $labels.controller }} show detail`; check the backup power and the cache
                module, and report the word to the smartarray-agent project.
              |||),
              runbook_url: runbook('SmartArrayCacheStatusUnknown'),
            },
          },
        ],
      },
      {
        name: 'smartarray-health',
        rules: [
          {
            alert: 'SmartArrayControllerStatusNotOk',
            expr: 'last_over_time(smartarray_controller_status{state=~"failed|other"}[1h]) == 1',
            'for': '1m',
            labels: { severity: 'critical' },
            annotations: {
              summary: 'Smart Array controller {{ $labels.controller }} status is not OK on {{ $labels.instance }}',
              description: fold(|||
                The vendor CLI reports a Controller Status other than OK for controller
                {{ $labels.controller }} on {{ $labels.instance }} (state {{ $labels.state }}). I/O to
                its logical drives may fail.
                To do: read `ssacli ctrl slot={{ $labels.controller }} show detail` and the server's
                IML (iLO), check the kernel log for hpsa/smartpqi errors, and open a hardware case;
                make sure backups of the affected volumes are current.
              |||),
              runbook_url: runbook('SmartArrayControllerStatusNotOk'),
            },
          },
          {
            alert: 'SmartArrayLogicalDriveFailed',
            expr: 'last_over_time(smartarray_logical_drive_status{state="failed"}[1h]) == 1',
            'for': '1m',
            labels: { severity: 'critical' },
            annotations: {
              summary: 'Smart Array logical drive {{ $labels.logical_drive }} failed on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                Logical drive {{ $labels.logical_drive }} of controller {{ $labels.controller }} on
                {{ $labels.instance }} is Failed: more drives failed than its RAID level tolerates and
                its data is not readable.
                To do: stop writes to the volume, identify the failed physical drives with `ssacli
                ctrl slot={{ $labels.controller }} pd all show status`, replace them, and restore the
                volume from backup (or ask HPE support before re-enabling a failed logical drive).
              |||),
              runbook_url: runbook('SmartArrayLogicalDriveFailed'),
            },
          },
          {
            alert: 'SmartArrayLogicalDriveDegraded',
            expr: 'last_over_time(smartarray_logical_drive_status{state=~"recovering|rebuilding|ready_for_rebuild|regenerating|interim_recovery_mode|needs_rebuild_permission|wrong_drive_replaced|bad_drive_connection"}[1h]) == 1',
            'for': '30m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array logical drive {{ $labels.logical_drive }} is {{ $labels.state }} on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                Logical drive {{ $labels.logical_drive }} of controller {{ $labels.controller }} on
                {{ $labels.instance }} has been {{ $labels.state }} for 30
                minutes{{ with printf `smartarray_logical_drive_progress_ratio{instance="%s",controller="%s",logical_drive="%s"}` $labels.instance $labels.controller $labels.logical_drive | query }}
                ({{ . | first | value | humanizePercentage }} complete){{ end }}: it runs without its
                full redundancy, and one more drive failure can lose its data.
                To do: find the failed or missing drive with `ssacli ctrl
                slot={{ $labels.controller }} pd all show status`, replace it (a spare or the new
                drive then rebuilds), and watch the rebuild finish.
              |||),
              runbook_url: runbook('SmartArrayLogicalDriveDegraded'),
            },
          },
          {
            alert: 'SmartArrayLogicalDriveStatusUnknown',
            expr: 'last_over_time(smartarray_logical_drive_status{state="other"}[1h]) == 1',
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array logical drive {{ $labels.logical_drive }} in an unknown state on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                The vendor CLI prints a status for logical drive {{ $labels.logical_drive }} of
                controller {{ $labels.controller }} on {{ $labels.instance }} that this agent does not
                know:
                "{{ with printf `smartarray_logical_drive_status_info{instance="%s",controller="%s",logical_drive="%s"}` $labels.instance $labels.controller $labels.logical_drive | query }}{{ . | first | label "word" }}{{ else }}not
                exported{{ end }}". Unknown is never taken for healthy: the write-cache interlock
                treats it as below threshold, and this alert stays until the word is understood.
                To do: read the logical drive's status with `ssacli ctrl slot={{ $labels.controller }}
                ld {{ $labels.logical_drive }} show` and the physical drives with `ssacli ctrl
                slot={{ $labels.controller }} pd all show status`; make sure backups of the volume are
                current, and report the word to the smartarray-agent project.
              |||),
              runbook_url: runbook('SmartArrayLogicalDriveStatusUnknown'),
            },
          },
          {
            alert: 'SmartArrayPhysicalDriveFailed',
            expr: 'last_over_time(smartarray_physical_drive_status{state="failed"}[1h]) == 1',
            'for': '1m',
            labels: { severity: 'critical' },
            annotations: {
              summary: 'Smart Array physical drive {{ $labels.drive }} failed on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                Physical drive {{ $labels.drive }} (port:box:bay) of controller
                {{ $labels.controller }} on {{ $labels.instance }} is Failed. Its logical drives run
                degraded, or have failed if they had no redundancy left.
                To do: check `ssacli ctrl slot={{ $labels.controller }} pd {{ $labels.drive }} show
                detail` for the serial and model, light the bay LED if needed (`ssacli ctrl
                slot={{ $labels.controller }} pd {{ $labels.drive }} modify led=on`), and replace the
                drive; the controller rebuilds onto it.
              |||),
              runbook_url: runbook('SmartArrayPhysicalDriveFailed'),
            },
          },
          {
            alert: 'SmartArrayPhysicalDrivePredictiveFailure',
            expr: 'last_over_time(smartarray_physical_drive_status{state="predictive_failure"}[1h]) == 1',
            'for': '1m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array physical drive {{ $labels.drive }} predicts its failure on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                Physical drive {{ $labels.drive }} of controller {{ $labels.controller }} on
                {{ $labels.instance }} reports Predictive Failure (its SMART thresholds are crossed).
                It still works, but is likely to fail soon.
                To do: schedule its replacement while the array is still redundant; check `ssacli ctrl
                slot={{ $labels.controller }} pd {{ $labels.drive }} show detail`.
              |||),
              runbook_url: runbook('SmartArrayPhysicalDrivePredictiveFailure'),
            },
          },
          {
            alert: 'SmartArrayPhysicalDriveStatusUnknown',
            expr: 'last_over_time(smartarray_physical_drive_status{state="other"}[1h]) == 1',
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Smart Array physical drive {{ $labels.drive }} in an unknown state on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                The vendor CLI prints a status for physical drive {{ $labels.drive }} of controller
                {{ $labels.controller }} on {{ $labels.instance }} that this agent does not know:
                "{{ with printf `smartarray_physical_drive_status_info{instance="%s",controller="%s",drive="%s"}` $labels.instance $labels.controller $labels.drive | query }}{{ . | first | label "word" }}{{ else }}not
                exported{{ end }}". Unknown is never taken for healthy: the write-cache interlock
                treats it as below threshold, and this alert stays until the word is understood.
                To do: read the drive's status with `ssacli ctrl slot={{ $labels.controller }} pd
                {{ $labels.drive }} show detail` (a cable or connection word means reseat the drive or
                cable); report the word to the smartarray-agent project.
              |||),
              runbook_url: runbook('SmartArrayPhysicalDriveStatusUnknown'),
            },
          },
          {
            alert: 'SmartArraySsdWearLow',
            expr: 'last_over_time(smartarray_physical_drive_usage_remaining_ratio[1h]) < %(low)g and last_over_time(smartarray_physical_drive_usage_remaining_ratio[1h]) >= %(critical)g' % wear,
            'for': '10m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'SSD {{ $labels.drive }} has {{ $value | humanizePercentage }} of its endurance left on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                SSD {{ $labels.drive }} of controller {{ $labels.controller }} on
                {{ $labels.instance }} reports {{ $value | humanizePercentage }} usage remaining: it
                is near the end of its rated write endurance, after which it may turn read-only or
                fail.
                To do: order a replacement and schedule the swap while the array is redundant; `ssacli
                ctrl slot={{ $labels.controller }} pd {{ $labels.drive }} show detail` gives its
                model, serial and power-on hours.
              |||),
              runbook_url: runbook('SmartArraySsdWearLow'),
            },
          },
          {
            alert: 'SmartArraySsdWearCritical',
            expr: 'last_over_time(smartarray_physical_drive_usage_remaining_ratio[1h]) < %(critical)g' % wear,
            'for': '5m',
            labels: { severity: 'critical' },
            annotations: {
              summary: 'SSD {{ $labels.drive }} is worn out ({{ $value | humanizePercentage }} left) on {{ $labels.instance }}, controller {{ $labels.controller }}',
              description: fold(|||
                SSD {{ $labels.drive }} of controller {{ $labels.controller }} on
                {{ $labels.instance }} reports {{ $value | humanizePercentage }} usage remaining
                (negative: past its rated endurance). It can stop accepting writes at any time.
                To do: replace it now, while its array is still redundant; check that a spare or the
                new drive rebuilds (`ssacli ctrl slot={{ $labels.controller }} ld all show status`).
              |||),
              runbook_url: runbook('SmartArraySsdWearCritical'),
            },
          },
          {
            alert: 'SmartArraySsdWearOutPredicted',
            expr: 'predict_linear(smartarray_physical_drive_usage_remaining_ratio[%(trend)dd], %(horizon)d * 86400) < 0 and last_over_time(smartarray_physical_drive_usage_remaining_ratio[1h]) >= %(low)g' % wear,
            'for': '1h',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'SSD {{ $labels.drive }} will wear out within %(horizon)d days on {{ $labels.instance }}, controller {{ $labels.controller }}' % wear,
              description: fold(|||
                At the rate SSD {{ $labels.drive }} of controller {{ $labels.controller }} on
                {{ $labels.instance }} has used its endurance over the last %(trend)d days, it reaches
                0%% usage remaining within %(horizon)d days, although it still has %(lowPercent)d%% or more.
                To do: order a replacement now, and look for what writes so much to the volume (a
                runaway log, a rebuild loop); `ssacli ctrl slot={{ $labels.controller }} pd
                {{ $labels.drive }} show detail`.
              ||| % wear),
              runbook_url: runbook('SmartArraySsdWearOutPredicted'),
            },
          },
          {
            alert: 'SmartArrayRebuildStalled',
            expr: 'last_over_time(smartarray_logical_drive_progress_ratio[1h]) and on(instance, job, controller, logical_drive) (changes(smartarray_logical_drive_progress_ratio[%(h)dh]) == 0) and on(instance, job, controller, logical_drive) (smartarray_logical_drive_progress_ratio offset %(h)dh) and on(instance, job, controller, logical_drive) (last_over_time(smartarray_logical_drive_status{state=~"recovering|rebuilding|regenerating"}[1h]) == 1)' % { h: c.rebuildStallHours },
            'for': '0m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'The rebuild of logical drive {{ $labels.logical_drive }} has not moved for %d hours on {{ $labels.instance }}, controller {{ $labels.controller }}' % c.rebuildStallHours,
              description: fold(|||
                Logical drive {{ $labels.logical_drive }} of controller {{ $labels.controller }} on
                {{ $labels.instance }} is rebuilding, but its progress has stayed at
                {{ $value | humanizePercentage }} for %d hours: the volume stays without its full
                redundancy while it is stuck.
                To do: check the replacement drive and its neighbours (`ssacli ctrl
                slot={{ $labels.controller }} pd all show status`) and the rebuild priority (`ssacli
                ctrl slot={{ $labels.controller }} show detail`, Rebuild Priority); a rebuild that
                stops on read errors of another drive needs HPE support.
              ||| % c.rebuildStallHours),
              runbook_url: runbook('SmartArrayRebuildStalled'),
            },
          },
          {
            alert: 'SmartArrayControllerLockup',
            expr: 'last_over_time(smartarray_controller_lockup_detected[1h]) == 1',
            'for': '0m',
            labels: { severity: 'critical' },
            annotations: {
              summary: 'Smart Array controller at PCI {{ $labels.pci_address }} locked up on {{ $labels.instance }}',
              description: fold(|||
                The hpsa driver reports lockup_detected for the Smart Array at PCI address
                {{ $labels.pci_address }} on {{ $labels.instance }}: the controller stopped responding
                and the driver has taken it offline, so I/O to its volumes fails.
                To do: check the kernel log (`journalctl -k | grep -i hpsa`) and the IML; a reboot is
                needed to bring the controller back. Update the controller firmware and open a
                hardware case if it happens again.
              |||),
              runbook_url: runbook('SmartArrayControllerLockup'),
            },
          },
        ],
      },
      {
        name: 'smartarray-agent',
        rules: [
          {
            alert: 'SmartArrayAgentDown',
            expr: 'up{%s} == 0' % c.jobSelector,
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'smartarray-agent on {{ $labels.instance }} cannot be scraped',
              description: fold(|||
                Prometheus has failed to scrape smartarray-agent on {{ $labels.instance }} for 5
                minutes: the host's battery, cache and drive state is no longer seen. Smart Array
                alerts that fired before keep firing for an hour from their last reading; a new
                failure is not noticed until the agent is back.
                To do: `systemctl status smartarray-agent` and `journalctl -u smartarray-agent` on the
                host (a crash, an OOM kill, a failed start after a package update), check that the
                listen address and firewall let Prometheus in (`curl -s
                http://{{ $labels.instance }}/metrics | head`), then restart it (`systemctl restart
                smartarray-agent`).
              |||),
              runbook_url: runbook('SmartArrayAgentDown'),
            },
          },
          {
            alert: 'SmartArrayAgentAbsent',
            // Absent now, and either present within the lookback (a mixed fleet that lost its
            // agent job pages; one that never had agents, watched by /probe alone, does not) or
            // with no probe target either (nothing watches the fleet: pages until it does).
            expr: 'absent(up{%(jobSelector)s}) and on() (present_over_time(up{%(jobSelector)s}[%(agentAbsentLookback)s]) or absent(up{%(probeSelector)s}))' % c,
            'for': '15m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'no smartarray-agent scrape target in Prometheus (job %s)' % c.agentJob,
              description: fold(|||
                Prometheus has had no target in the scrape job "%(agentJob)s" for 15 minutes, although
                it had some in the last %(agentAbsentLookback)s (or the probe job "%(probeJob)s" has
                none either): the job was removed or renamed, or service discovery lost every host, so
                no Smart Array alert can fire for a host watched by an agent.
                To do: check the scrape configuration (`scrape_configs` in prometheus.yml, or your
                service discovery) and Prometheus' Targets page. If the agent is scraped under another
                job name, set agentJob (or jobSelector, now `%(jobSelector)s`) in the monitoring
                mixin and regenerate; in textfile mode, delete this rule and SmartArrayAgentDown. A
                fleet moved to /probe on purpose: this resolves %(agentAbsentLookback)s after the last
                agent target was seen (silence it until then).
              ||| % c),
              runbook_url: runbook('SmartArrayAgentAbsent'),
            },
          },
          {
            alert: 'SmartArrayProbeFailing',
            // The iLO did not answer the probe, or Prometheus could not scrape the prober at all.
            expr: 'smartarray_probe_success{%(probeSelector)s} == 0 or up{%(probeSelector)s} == 0' % c,
            'for': '%dm' % c.probeFailingMinutes,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'The iLO {{ $labels.instance }} cannot be read through /probe: its arrays are not watched',
              description: fold(|||
                For %(probeFailingMinutes)d minutes the probe job "%(probeJob)s" has not read the iLO
                {{ $labels.instance }}: the agent answering /probe said smartarray_probe_success 0, or
                Prometheus could not scrape that agent at all (`up` 0). The host's battery, cache and
                drive state is no longer seen; its hardware alerts keep firing for an hour from their
                last reading.
                To do: on the probe node, `journalctl -u smartarray-agent-serve` says why in one line
                per failed login (credentials, TLS, timeout); a target outside [probe] targets (403) or
                an unknown module (400) is the scrape's error on Prometheus' Targets page. Check that
                the target matches a [probe] targets pattern, that the module's credentials and CA files
                are handed to the serve unit (LoadCredential=), and that the iLO answers from the
                probe node (`curl -s https://{{ $labels.instance }}/redfish/v1/`); a failure is
                answered again for [probe] min_interval_s after the login that failed.
              ||| % c),
              runbook_url: runbook('SmartArrayProbeFailing'),
            },
          },
          // A probe is answered from the target's last read: success 1 says only that that read
          // succeeded. Reads that stop (waiting for an iLO session, or hung) leave the old facts
          // looking healthy, so an answer older than probeStaleSeconds pages, and so does one
          // that does not say how old it is. A failed last read is SmartArrayProbeFailing's.
          {
            alert: 'SmartArrayProbeSnapshotStale',
            expr: |||
              (
                smartarray_probe_snapshot_age_seconds{%(probeSelector)s} > %(probeStaleSeconds)d
                unless on (instance, job) smartarray_probe_success{%(probeSelector)s} == 0
              )
              or
              (
                smartarray_probe_success{%(probeSelector)s} == 1
                unless on (instance, job) smartarray_probe_snapshot_age_seconds{%(probeSelector)s}
              )
            ||| % c,
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'The iLO {{ $labels.instance }} is shown from an old read through /probe: its arrays are not watched',
              description: fold(|||
                For 5 minutes the probe job "%(probeJob)s" has answered for the iLO
                {{ $labels.instance }} from a read
                {{ with printf `smartarray_probe_snapshot_age_seconds{instance="%%s",job="%%s"}` $labels.instance $labels.job | query }}{{ . | first | value | humanizeDuration }}
                old{{ else }}of unknown age (the page has no
                smartarray_probe_snapshot_age_seconds){{ end }}, where one older than
                %(staleText)s is stale: the battery, cache and drive state Prometheus shows for that
                host is that old, and smartarray_probe_success 1 says only that that read succeeded,
                so a failure since is not seen. Unknown is never taken for fresh.
                To do: on the probe node, `journalctl -u smartarray-agent-serve` says whether reads
                wait for an iLO session ("no read of ... queued": raise [probe] max_sessions or
                min_interval_s, docs/fleet.md "Sizing") or hang; restart the serve unit if its reads
                never end. A page without the age comes from a prober older than the rules, or a
                metric_relabel_configs that drops smartarray_probe_snapshot_age_seconds: upgrade it,
                or keep the series.
              ||| % (c { staleText: '%dm %ds' % [std.floor(c.probeStaleSeconds / 60), c.probeStaleSeconds % 60] })),
              runbook_url: runbook('SmartArrayProbeSnapshotStale'),
            },
          },
          {
            alert: 'SmartArrayCollectorFailing',
            expr: 'smartarray_collector_success == 0',
            'for': '10m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'smartarray-agent collector {{ $labels.collector }} failing on {{ $labels.instance }}',
              description: fold(|||
                The {{ $labels.collector }} collector of smartarray-agent on {{ $labels.instance }}
                has failed for 10 minutes, so the Smart Array alerts above cannot see this host's
                battery and cache state.
                To do: read the reason with `journalctl -u smartarray-agent` (or `smartarray-agent
                status` as root). Common causes: no vendor CLI installed (install HPE's ssacli), the
                sg module not loaded (`modprobe sg`), the CLI hanging or busy in another process (the
                lock /run/smartarray-agent/cli.lock names its holder).
              |||),
              runbook_url: runbook('SmartArrayCollectorFailing'),
            },
          },
          {
            alert: 'SmartArrayCollectorDataStale',
            expr: 'time() - smartarray_collector_last_success_timestamp_seconds > %d' % c.staleSeconds,
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'smartarray-agent data from collector {{ $labels.collector }} is stale on {{ $labels.instance }}',
              description: fold(|||
                The last successful {{ $labels.collector }} collection on {{ $labels.instance }} is
                {{ $value | humanizeDuration }} old: the Smart Array state in Prometheus is out of
                date (served from the past, or already dropped).
                To do: check that the collector is not failing (SmartArrayCollectorFailing) and that
                the service runs: `systemctl status smartarray-agent` and `journalctl -u
                smartarray-agent`; a collection that hangs is killed by the systemd watchdog and
                restarted.
              |||),
              runbook_url: runbook('SmartArrayCollectorDataStale'),
            },
          },
          {
            alert: 'SmartArrayChangeUnfinished',
            expr: 'last_over_time(smartarray_unfinished_changes[1h]) > 0',
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'A write-cache change on {{ $labels.instance }} never recorded its outcome',
              description: fold(|||
                {{ $value }} change(s) to a Smart Array on {{ $labels.instance }} wrote their audit
                intent but no outcome (the command was killed mid-way), and the controller could not
                be read to reconcile them: whether the change is in effect is not known, and a new
                change to that controller is refused.
                To do: run `smartarray-agent status` as root on the host; it reconciles the change
                once the controller answers and says what was asked, by whom, and what the controller
                shows now. The record is in /var/lib/smartarray-agent/audit.jsonl
                (`smartarray_unfinished_change_info` gives its id).
              |||),
              runbook_url: runbook('SmartArrayChangeUnfinished'),
            },
          },
          {
            alert: 'SmartArrayTextfileStale',
            expr: @'time() - node_textfile_mtime_seconds{file=~"(.*/)?smartarray\\.prom"} > %d' % c.staleSeconds,
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'smartarray.prom for node_exporter not updated on {{ $labels.instance }}',
              description: fold(|||
                node_exporter's textfile collector on {{ $labels.instance }} reads a smartarray.prom
                last written {{ $value | humanizeDuration }} ago: the Smart Array metrics from it are
                out of date.
                To do: check the timer and its last run: `systemctl list-timers
                smartarray-agent-textfile.timer`, `systemctl status smartarray-agent-textfile.service`
                and `journalctl -u smartarray-agent-textfile.service`. If the timer is gone, enable it
                (`systemctl enable --now smartarray-agent-textfile.timer`); if textfile mode is no
                longer used, delete the stale smartarray.prom.
              |||),
              runbook_url: runbook('SmartArrayTextfileStale'),
            },
          },
          // The file never written (a timer never enabled, a wrong directory) has no series to be
          // stale: label the node_exporter targets of textfile hosts smartarray_textfile="expected"
          // (file_sd or static_configs labels). A file that was there in the last day and is gone
          // alerts without the label.
          {
            alert: 'SmartArrayTextfileMissing',
            expr: |||
              (
                last_over_time(node_textfile_mtime_seconds{file=~"(.*/)?smartarray\\.prom"}[1d])
                unless node_textfile_mtime_seconds{file=~"(.*/)?smartarray\\.prom"}
              )
              or on(instance)
              (
                up{smartarray_textfile="expected"} == 1
                unless on(instance) node_textfile_mtime_seconds{file=~"(.*/)?smartarray\\.prom"}
              )
            |||,
            'for': '30m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'No smartarray.prom for node_exporter on {{ $labels.instance }}',
              description: fold(|||
                node_exporter on {{ $labels.instance }} reads no smartarray.prom: the file was never
                written, or is gone, so no Smart Array metric comes from this host.
                To do: check that the timer is enabled and runs (`systemctl list-timers
                smartarray-agent-textfile.timer`, `journalctl -u smartarray-agent-textfile.service`),
                and that its directory is the one node_exporter reads
                (`--collector.textfile.directory`; the unit's TEXTFILE_DIR). A host labelled
                smartarray_textfile="expected" that no longer uses textfile mode: drop the label.
              |||),
              runbook_url: runbook('SmartArrayTextfileMissing'),
            },
          },
        ],
      },
    ],
  },
}
