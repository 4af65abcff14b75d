"""Battery charge from the iLO's Redfish service (iLO 4 and iLO 5): docs/redfish.md."""
