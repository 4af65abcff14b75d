// The fleet dashboard (every host at once): packaging/grafana/fleet.json. Its job variable
// starts at _config.agentJob (mixin.libsonnet), the job the agent-down alerts select, and its
// probe_job variable at _config.probeJob: the "Watched by" panels set the hosts an agent
// watches beside those read through their iLO by /probe.
{
  local c = $._config,

  grafanaDashboards+:: {
    'fleet.json': {
      "title": "Smart Array fleet",
      "uid": "smartarray-fleet",
      "description": "Every host watched by smartarray-agent at once, by an agent on the host or through its iLO by /probe: backup power failed or recharging, unprotected or inactive write cache, agents down, drives rebuilding or failed, CLI and firmware versions. Tables link to the per-host dashboard (uid smartarray-agent).",
      "tags": [
        "smartarray",
        "hardware",
        "storage"
      ],
      "editable": true,
      "graphTooltip": 1,
      "schemaVersion": 39,
      "version": 1,
      "time": {
        "from": "now-12h",
        "to": "now"
      },
      "refresh": "1m",
      "timezone": "",
      "links": [
        {
          "title": "Smart Array host",
          "type": "link",
          "url": "/d/smartarray-agent",
          "icon": "dashboard",
          "keepTime": true,
          "targetBlank": false,
          "tooltip": "one host, one row per controller",
          "asDropdown": false,
          "includeVars": false,
          "tags": []
        }
      ],
      "annotations": {
        "list": []
      },
      "templating": {
        "list": [
          {
            "name": "datasource",
            "label": "Data source",
            "type": "datasource",
            "query": "prometheus",
            "current": {},
            "hide": 0,
            "refresh": 1,
            "regex": "",
            "includeAll": false,
            "multi": false,
            "options": []
          },
          {
            "name": "job",
            "label": "Agent scrape job",
            "type": "textbox",
            "query": c.agentJob,
            "current": {
              "text": c.agentJob,
              "value": c.agentJob
            },
            "hide": 0,
            "options": [],
            "description": "The scrape job of smartarray-agent, for the agents-down panels (the alert rules use the same default)."
          },
          {
            "name": "probe_job",
            "label": "Probe scrape job",
            "type": "textbox",
            "query": c.probeJob,
            "current": {
              "text": c.probeJob,
              "value": c.probeJob
            },
            "hide": 0,
            "options": [],
            "description": "The scrape job of /probe (iLOs read by an agent's serve for hosts without one), for the watched-by panels (SmartArrayProbeFailing uses the same default)."
          }
        ]
      },
      "panels": [
        {
          "id": 1,
          "type": "stat",
          "title": "Backup power failed",
          "description": "Controllers whose battery or capacitor reports Failed (write cache off).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 0,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count(smartarray_backup_power_status{state=\"failed\"} == 1) or vector(0)",
              "legendFormat": "Backup power failed",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "red",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 2,
          "type": "stat",
          "title": "Backup power recharging",
          "description": "Controllers whose backup power is recharging (normal for a while after a power-on).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 4,
            "y": 0,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count(smartarray_backup_power_status{state=\"recharging\"} == 1) or vector(0)",
              "legendFormat": "Backup power recharging",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "orange",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 3,
          "type": "stat",
          "title": "Unprotected write cache",
          "description": "Controllers whose write cache holds data no healthy backup power protects: data at risk.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 8,
            "y": 0,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count(smartarray_unprotected_write_cache == 1) or vector(0)",
              "legendFormat": "Unprotected write cache",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "red",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 4,
          "type": "stat",
          "title": "Write cache inactive",
          "description": "Controllers that give cache to writes but do not cache writes now (slow writes).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 12,
            "y": 0,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count(smartarray_write_cache_active == 0 and on (instance, job, controller) smartarray_cache_ratio{op=\"write\"} > 0) or vector(0)",
              "legendFormat": "Write cache inactive",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "orange",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 5,
          "type": "stat",
          "title": "Agents down",
          "description": "smartarray-agent targets Prometheus cannot scrape (scrape job $job).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 16,
            "y": 0,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count(up{job=\"$job\"} == 0) or vector(0)",
              "legendFormat": "Agents down",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "red",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 6,
          "type": "stat",
          "title": "Unknown states",
          "description": "Backup power, cache or drive status words the agent does not know (state=\"other\"): treated as not healthy.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 20,
            "y": 0,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count(smartarray_backup_power_status{state=\"other\"} == 1 or smartarray_cache_status{state=\"other\"} == 1 or smartarray_logical_drive_status{state=\"other\"} == 1 or smartarray_physical_drive_status{state=\"other\"} == 1) or vector(0)",
              "legendFormat": "Unknown states",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "orange",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 16,
          "type": "stat",
          "title": "Hosts watched by an agent",
          "description": "Targets of the agent job ($job): smartarray-agent runs on the host and serves its /metrics.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 4,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count(up{job=\"$job\"}) or vector(0)",
              "legendFormat": "Hosts watched by an agent",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "blue",
                    "value": null
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 17,
          "type": "stat",
          "title": "Hosts watched by a probe",
          "description": "Targets of the probe job ($probe_job): iLOs of hosts without an agent, read through Redfish by an agent's /probe.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 8,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count(up{job=\"$probe_job\"}) or vector(0)",
              "legendFormat": "Hosts watched by a probe",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "blue",
                    "value": null
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 18,
          "type": "stat",
          "title": "Probes failing",
          "description": "iLOs of the probe job not read now: smartarray_probe_success 0, or the agent answering /probe not scraped (up 0). SmartArrayProbeFailing pages after a while.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 4,
            "y": 4,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count(smartarray_probe_success{job=\"$probe_job\"} == 0 or up{job=\"$probe_job\"} == 0) or vector(0)",
              "legendFormat": "Probes failing",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "red",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 20,
          "type": "stat",
          "title": "Probes answered from an old read",
          "description": "iLOs of the probe job answered from a read older than %d s (smartarray_probe_snapshot_age_seconds), or from one of unknown age: their success 1 is an old read's. SmartArrayProbeSnapshotStale pages after a while." % c.probeStaleSeconds,
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 4,
            "y": 8,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              // SmartArrayProbeSnapshotStale's selection, without its `for`
              "expr": "count((smartarray_probe_snapshot_age_seconds{job=\"$probe_job\"} > %d unless on (instance, job) smartarray_probe_success{job=\"$probe_job\"} == 0) or (smartarray_probe_success{job=\"$probe_job\"} == 1 unless on (instance, job) smartarray_probe_snapshot_age_seconds{job=\"$probe_job\"})) or vector(0)" % c.probeStaleSeconds,
              "legendFormat": "Probes answered from an old read",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "time_series"
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "decimals": 0,
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "red",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 19,
          "type": "table",
          "title": "Watched by",
          "description": "Every host by how it is watched: agent (smartarray-agent on the host, job $job) or probe (its iLO read by /probe, job $probe_job; instance is the iLO). Answering: the agent scraped (up), the iLO read (smartarray_probe_success, or up 0 when the prober was not scraped).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 8,
            "y": 4,
            "w": 16,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "label_replace(up{job=\"$job\"}, \"watched_by\", \"agent\", \"\", \"\") or label_replace(smartarray_probe_success{job=\"$probe_job\"} or up{job=\"$probe_job\"}, \"watched_by\", \"probe\", \"\", \"\")",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "table"
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true,
                  "__name__": true
                },
                "indexByName": {
                  "instance": 0,
                  "watched_by": 1,
                  "job": 2,
                  "Value": 3
                },
                "renameByName": {
                  "watched_by": "watched by",
                  "Value": "answering"
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm",
            "sortBy": [
              {
                "displayName": "answering",
                "desc": false
              }
            ]
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "no agent or probe target",
              "links": [
                {
                  "title": "Open the host's dashboard",
                  "targetBlank": false,
                  "url": "/d/smartarray-agent?var-instance=${__data.fields.instance}&${__url_time_range}"
                }
              ]
            },
            "overrides": [
              {
                "matcher": {
                  "id": "byName",
                  "options": "answering"
                },
                "properties": [
                  {
                    "id": "mappings",
                    "value": [
                      {
                        "type": "value",
                        "options": {
                          "0": {
                            "text": "no",
                            "color": "red",
                            "index": 0
                          },
                          "1": {
                            "text": "yes",
                            "color": "green",
                            "index": 1
                          }
                        }
                      }
                    ]
                  },
                  {
                    "id": "custom.cellOptions",
                    "value": {
                      "type": "color-background"
                    }
                  }
                ]
              }
            ]
          }
        },
        {
          "id": 7,
          "type": "table",
          "title": "Backup power not OK",
          "description": "Every controller whose backup power is failed, recharging, unknown or not reported. Click a host to open its dashboard.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 12,
            "w": 12,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_backup_power_status{state=~\"failed|recharging|other|absent\"} == 1",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "table"
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true,
                  "Value": true,
                  "job": true,
                  "__name__": true
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "all backup power OK",
              "links": [
                {
                  "title": "Open the host's dashboard",
                  "targetBlank": false,
                  "url": "/d/smartarray-agent?var-instance=${__data.fields.instance}&${__url_time_range}"
                }
              ]
            },
            "overrides": []
          }
        },
        {
          "id": 8,
          "type": "table",
          "title": "Write cache unprotected or inactive",
          "description": "Controllers with unprotected write cache (A, data at risk) or with write cache configured but inactive (B, slow writes).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 12,
            "y": 12,
            "w": 12,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_unprotected_write_cache == 1",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "table"
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_write_cache_active == 0 and on (instance, job, controller) smartarray_cache_ratio{op=\"write\"} > 0",
              "legendFormat": "",
              "refId": "B",
              "range": false,
              "instant": true,
              "format": "table"
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true,
                  "Value": true,
                  "job": true,
                  "__name__": true
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "none",
              "links": [
                {
                  "title": "Open the host's dashboard",
                  "targetBlank": false,
                  "url": "/d/smartarray-agent?var-instance=${__data.fields.instance}&${__url_time_range}"
                }
              ]
            },
            "overrides": []
          }
        },
        {
          "id": 9,
          "type": "table",
          "title": "Drives rebuilding",
          "description": "Logical drives whose redundancy is being restored (recovering, rebuilding, ready for rebuild, regenerating), with the progress the CLI prints (Value #B, 0-1).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 20,
            "w": 12,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_logical_drive_status{state=~\"recovering|rebuilding|ready_for_rebuild|regenerating\"} == 1",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "table"
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_logical_drive_progress_ratio and on (instance, job, controller, logical_drive) (smartarray_logical_drive_status{state=~\"recovering|rebuilding|ready_for_rebuild|regenerating\"} == 1)",
              "legendFormat": "",
              "refId": "B",
              "range": false,
              "instant": true,
              "format": "table"
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true,
                  "Value": true,
                  "job": true,
                  "__name__": true
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "no drive rebuilding",
              "links": [
                {
                  "title": "Open the host's dashboard",
                  "targetBlank": false,
                  "url": "/d/smartarray-agent?var-instance=${__data.fields.instance}&${__url_time_range}"
                }
              ]
            },
            "overrides": []
          }
        },
        {
          "id": 10,
          "type": "table",
          "title": "Drives failed, degraded or unknown",
          "description": "Logical drives (A) and physical drives (B) failed, degraded, predicting failure or in an unknown state.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 12,
            "y": 20,
            "w": 12,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_logical_drive_status{state=~\"interim_recovery_mode|needs_rebuild_permission|wrong_drive_replaced|bad_drive_connection|failed|other\"} == 1",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "table"
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_physical_drive_status{state=~\"predictive_failure|failed|other\"} == 1",
              "legendFormat": "",
              "refId": "B",
              "range": false,
              "instant": true,
              "format": "table"
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true,
                  "Value": true,
                  "job": true,
                  "__name__": true
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "no drive needs attention",
              "links": [
                {
                  "title": "Open the host's dashboard",
                  "targetBlank": false,
                  "url": "/d/smartarray-agent?var-instance=${__data.fields.instance}&${__url_time_range}"
                }
              ]
            },
            "overrides": []
          }
        },
        {
          "id": 11,
          "type": "table",
          "title": "Agents not scraped",
          "description": "smartarray-agent targets Prometheus cannot scrape now. Their last hardware alerts keep firing for an hour.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 28,
            "w": 8,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "up{job=\"$job\"} == 0",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "table"
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true,
                  "Value": true,
                  "job": true,
                  "__name__": true
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "every agent up",
              "links": [
                {
                  "title": "Open the host's dashboard",
                  "targetBlank": false,
                  "url": "/d/smartarray-agent?var-instance=${__data.fields.instance}&${__url_time_range}"
                }
              ]
            },
            "overrides": []
          }
        },
        {
          "id": 12,
          "type": "table",
          "title": "Vendor CLI versions",
          "description": "How many hosts run each Smart Array CLI version.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 8,
            "y": 28,
            "w": 8,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count by (version) (smartarray_cli_info)",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "table"
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "not reported",
              "links": []
            },
            "overrides": []
          }
        },
        {
          "id": 13,
          "type": "table",
          "title": "Controller models and firmware",
          "description": "How many controllers run each firmware, per model.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 16,
            "y": 28,
            "w": 8,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count by (model, firmware) (smartarray_controller_info)",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "table"
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "not reported",
              "links": []
            },
            "overrides": []
          }
        },
        {
          "id": 14,
          "type": "timeseries",
          "title": "Backup power not OK over time",
          "description": "Controllers per backup power state other than OK: a fleet-wide rise after a power event is normal recharging; a plateau is not.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 36,
            "w": 24,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count by (state) (smartarray_backup_power_status{state!=\"ok\"} == 1)",
              "legendFormat": "{{state}}",
              "refId": "A",
              "range": true,
              "instant": false,
              "format": "time_series"
            }
          ],
          "options": {
            "legend": {
              "displayMode": "list",
              "placement": "bottom",
              "showLegend": true
            },
            "tooltip": {
              "mode": "multi",
              "sort": "desc"
            }
          },
          "fieldConfig": {
            "defaults": {
              "decimals": 0,
              "min": 0,
              "noValue": "all backup power OK",
              "custom": {
                "drawStyle": "line",
                "lineWidth": 1,
                "fillOpacity": 10
              }
            },
            "overrides": []
          }
        },
        {
          "id": 15,
          "type": "table",
          "title": "SSDs with the least endurance left",
          "description": "The 20 SSDs with the least Usage remaining (1 new, 0 at rated endurance, negative past it). Replace before 0.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 44,
            "w": 24,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "bottomk(20, smartarray_physical_drive_usage_remaining_ratio)",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true,
              "format": "table"
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true,
                  "Value": true,
                  "job": true,
                  "__name__": true
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "no SSD reports wear",
              "links": [
                {
                  "title": "Open the host's dashboard",
                  "targetBlank": false,
                  "url": "/d/smartarray-agent?var-instance=${__data.fields.instance}&${__url_time_range}"
                }
              ]
            },
            "overrides": []
          }
        }
      ]
    },
  },
}
