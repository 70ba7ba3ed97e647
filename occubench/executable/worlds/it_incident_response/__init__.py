"""IT incident response: triage alerts into incidents, page on-call engineers, trace root causes through service
dependencies and recent changes, resolve incidents and file postmortems."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Literal

from occubench.executable.world import Call, Check, ExecTask, ToolError, World, found, next_id, one, only_changed, rows

world = World(
    name="it_incident_response", scenario="IT Incident Response", category="Technology & IT",
    domain="IT Operations", directory=Path(__file__).parent,
    main_tables=("services", "alerts", "changes", "engineers", "oncall_shifts"),
    description="An incident-management console for an e-commerce platform: services by tier with their "
                "dependencies, monitoring alerts, on-call rotations with engineers' skills, change records, and "
                "incidents with pages, timelines and postmortems. The current time is 2025-11-14T09:40:00Z.",
)

NOW = "2025-11-14T09:40:00Z"
SEVERITIES = Literal["SEV1", "SEV2", "SEV3"]
_FLOW = ("open", "investigating", "identified", "mitigated", "resolved")


def _incident(db: sqlite3.Connection, incident_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM incidents WHERE incident_id = ?", incident_id,
                 missing=f"incident {incident_id} not found")


def _service(db: sqlite3.Connection, service_id: str) -> dict[str, Any]:
    service = one(db, "SELECT * FROM services WHERE service_id = ?", service_id)
    if service is None:
        known = ", ".join(r["service_id"] for r in rows(db, "SELECT service_id FROM services ORDER BY service_id"))
        raise ToolError(f"service {service_id!r} not found; services are: {known}")
    return service


def _engineer(db: sqlite3.Connection, engineer_id: str) -> dict[str, Any]:
    return found(db, "SELECT * FROM engineers WHERE engineer_id = ?", engineer_id,
                 missing=f"engineer {engineer_id} not found")


def _event(db: sqlite3.Connection, incident_id: str, event: str) -> None:
    db.execute("INSERT INTO incident_events (incident_id, at, event) VALUES (?, ?, ?)", (incident_id, NOW, event))


@world.tool
def list_alerts(db: sqlite3.Connection, status: Literal["firing", "acknowledged", "resolved"] | None = None,
                service_id: str | None = None, incident_id: str | None = None) -> dict[str, Any]:
    """Monitoring alerts, newest first, optionally filtered. Priority is the monitoring rule's default label, not
    an incident severity.

    Args:
        status: firing (not yet handled), acknowledged (attached to an incident) or resolved.
        service_id: Only alerts on this service, e.g. checkout-api.
        incident_id: Only alerts attached to this incident.
    """
    found = rows(db, "SELECT * FROM alerts WHERE (? IS NULL OR status = ?) AND (? IS NULL OR service_id = ?) "
                     "AND (? IS NULL OR incident_id = ?) ORDER BY fired_at DESC",
                 status, status, service_id, service_id, incident_id, incident_id)
    return {"now": NOW, "alerts": found, "count": len(found)}


@world.tool
def get_service(db: sqlite3.Connection, service_id: str) -> dict[str, Any]:
    """A service's tier, owning team, latency SLO, the services it depends on and the services that depend on it.

    Args:
        service_id: Service identifier, e.g. orders-api.
    """
    service = _service(db, service_id)
    service["depends_on"] = rows(db, "SELECT s.service_id, s.tier, s.owner_team FROM service_dependencies d "
                                     "JOIN services s ON s.service_id = d.depends_on WHERE d.service_id = ? "
                                     "ORDER BY s.service_id", service_id)
    service["dependents"] = [r["service_id"] for r in rows(
        db, "SELECT service_id FROM service_dependencies WHERE depends_on = ? ORDER BY service_id", service_id)]
    return service


@world.tool
def list_changes(db: sqlite3.Connection, service_id: str | None = None,
                 status: Literal["scheduled", "completed", "rolled_back"] | None = None) -> dict[str, Any]:
    """Change records (deploys, config changes, migrations), newest first.

    Args:
        service_id: Only changes to this service.
        status: scheduled (not yet done), completed or rolled_back.
    """
    found = rows(db, "SELECT * FROM changes WHERE (? IS NULL OR service_id = ?) AND (? IS NULL OR status = ?) "
                     "ORDER BY deployed_at DESC", service_id, service_id, status, status)
    return {"now": NOW, "changes": found, "count": len(found)}


@world.tool
def get_oncall_schedule(db: sqlite3.Connection, rotation: str, at: str | None = None) -> dict[str, Any]:
    """A rotation's on-call shifts (start inclusive, end exclusive, UTC) with each engineer's skills.

    Args:
        rotation: The rotation, named after the owning team, e.g. payments, data-platform.
        at: Optional ISO-8601 UTC time such as 2025-11-14T02:15:00Z; only shifts covering that moment.
    """
    if not one(db, "SELECT 1 FROM oncall_shifts WHERE rotation = ?", rotation):
        known = ", ".join(r["rotation"] for r in rows(db, "SELECT DISTINCT rotation FROM oncall_shifts ORDER BY 1"))
        raise ToolError(f"no rotation named {rotation!r}; rotations are: {known}")
    shifts = rows(db, "SELECT o.shift_id, o.role, o.starts_at, o.ends_at, e.engineer_id, e.name, e.skills "
                      "FROM oncall_shifts o JOIN engineers e ON e.engineer_id = o.engineer_id "
                      "WHERE o.rotation = ? AND (? IS NULL OR (o.starts_at <= ? AND ? < o.ends_at)) "
                      "ORDER BY o.starts_at, o.role", rotation, at, at, at)
    return {"now": NOW, "rotation": rotation, "shifts": shifts}


@world.tool
def get_incident(db: sqlite3.Connection, incident_id: str) -> dict[str, Any]:
    """An incident with its attached alerts, pages, timeline and postmortem (if any).

    Args:
        incident_id: Incident identifier, e.g. INC-7001.
    """
    incident = _incident(db, incident_id)
    incident["alerts"] = rows(db, "SELECT alert_id, service_id, fired_at, metric, value, threshold, status, summary "
                                  "FROM alerts WHERE incident_id = ? ORDER BY fired_at", incident_id)
    incident["pages"] = rows(db, "SELECT engineer_id, paged_at, message FROM pages WHERE incident_id = ? "
                                 "ORDER BY page_id", incident_id)
    incident["timeline"] = rows(db, "SELECT at, event FROM incident_events WHERE incident_id = ? ORDER BY event_id",
                                incident_id)
    incident["postmortem"] = one(db, "SELECT * FROM postmortems WHERE incident_id = ?", incident_id)
    return incident


@world.tool(writes=True)
def create_incident(db: sqlite3.Connection, service_id: str, severity: SEVERITIES, title: str,
                    alert_ids: list[str]) -> dict[str, Any]:
    """Declare a new incident on a service and attach firing alerts to it (they become acknowledged).

    Args:
        service_id: The impacted service.
        severity: SEV1, SEV2 or SEV3.
        title: A short description of the impact.
        alert_ids: Firing alerts to attach, e.g. ["ALR-5016"].
    """
    _service(db, service_id)
    if not title.strip():
        raise ToolError("a title is required")
    if len(set(alert_ids)) != len(alert_ids):
        raise ToolError("alert_ids contains duplicates")
    for alert_id in alert_ids:
        alert = one(db, "SELECT * FROM alerts WHERE alert_id = ?", alert_id)
        if alert is None:
            raise ToolError(f"alert {alert_id} not found")
        if alert["status"] != "firing":
            raise ToolError(f"alert {alert_id} is {alert['status']}"
                            + (f" (attached to {alert['incident_id']})" if alert["incident_id"] else "")
                            + "; only firing alerts can be attached")
    incident_id = next_id(db, "incidents", "incident_id", "INC-", 7000)
    db.execute("INSERT INTO incidents (incident_id, title, service_id, severity, status, opened_at) "
               "VALUES (?, ?, ?, ?, 'open', ?)", (incident_id, title, service_id, severity, NOW))
    for alert_id in alert_ids:
        db.execute("UPDATE alerts SET status = 'acknowledged', incident_id = ? WHERE alert_id = ?",
                   (incident_id, alert_id))
    _event(db, incident_id, f"opened as {severity}" + (f" from {', '.join(alert_ids)}" if alert_ids else ""))
    return {"incident_id": incident_id, "severity": severity, "status": "open", "alerts": alert_ids}


@world.tool(writes=True)
def page_engineer(db: sqlite3.Connection, incident_id: str, engineer_id: str, message: str) -> dict[str, Any]:
    """Page an engineer to work on an unresolved incident.

    Args:
        incident_id: The incident.
        engineer_id: The engineer to page, e.g. E-102.
        message: What the engineer is paged about.
    """
    incident = _incident(db, incident_id)
    if incident["status"] == "resolved":
        raise ToolError(f"incident {incident_id} is resolved; nobody can be paged for it")
    engineer = _engineer(db, engineer_id)
    db.execute("INSERT INTO pages (incident_id, engineer_id, paged_at, message) VALUES (?, ?, ?, ?)",
               (incident_id, engineer_id, NOW, message))
    _event(db, incident_id, f"paged {engineer_id}")
    shift = one(db, "SELECT rotation, role FROM oncall_shifts WHERE engineer_id = ? AND starts_at <= ? AND ? < ends_at",
                engineer_id, NOW, NOW)
    return {"incident_id": incident_id, "paged": engineer_id, "name": engineer["name"], "on_call_now": shift}


@world.tool(writes=True)
def update_incident(db: sqlite3.Connection, incident_id: str, severity: SEVERITIES | None = None,
                    status: Literal["investigating", "identified", "mitigated"] | None = None,
                    root_cause_service: str | None = None, related_change_id: str | None = None,
                    note: str | None = None) -> dict[str, Any]:
    """Change an unresolved incident's severity or status (forward only: open, investigating, identified,
    mitigated), or record its root-cause service and the related change.

    Args:
        incident_id: The incident to update.
        severity: New severity: SEV1, SEV2 or SEV3.
        status: New status: investigating, identified or mitigated (resolve with resolve_incident).
        root_cause_service: The service where the fault originated.
        related_change_id: The change record that caused or triggered the incident, e.g. CHG-8801.
        note: A timeline note.
    """
    incident = _incident(db, incident_id)
    if incident["status"] == "resolved":
        raise ToolError(f"incident {incident_id} is resolved and can no longer be changed")
    if severity is None and status is None and root_cause_service is None and related_change_id is None \
            and not note:
        raise ToolError("nothing to update")
    updates: dict[str, Any] = {}
    if status is not None:
        if _FLOW.index(status) < _FLOW.index(incident["status"]):
            raise ToolError(f"incident {incident_id} is already {incident['status']}; status cannot go back to "
                            f"{status}")
        updates["status"] = status
        if status == "mitigated" and not incident["mitigated_at"]:
            updates["mitigated_at"] = NOW
    if severity is not None:
        updates["severity"] = severity
    if root_cause_service is not None:
        _service(db, root_cause_service)
        updates["root_cause_service"] = root_cause_service
    if related_change_id is not None:
        if one(db, "SELECT 1 FROM changes WHERE change_id = ?", related_change_id) is None:
            raise ToolError(f"change {related_change_id} not found")
        updates["related_change_id"] = related_change_id
    db.execute("UPDATE incidents SET severity = COALESCE(?, severity), status = COALESCE(?, status), "
               "mitigated_at = COALESCE(?, mitigated_at), root_cause_service = COALESCE(?, root_cause_service), "
               "related_change_id = COALESCE(?, related_change_id) WHERE incident_id = ?",
               (updates.get("severity"), updates.get("status"), updates.get("mitigated_at"),
                updates.get("root_cause_service"), updates.get("related_change_id"), incident_id))
    described = ", ".join(f"{k} {incident[k]} -> {v}" for k, v in updates.items())
    _event(db, incident_id, "; ".join(x for x in (described, note) if x))
    return {**_incident(db, incident_id), "updated": sorted(updates)}


@world.tool(writes=True)
def resolve_incident(db: sqlite3.Connection, incident_id: str, resolution: str) -> dict[str, Any]:
    """Resolve an incident whose root-cause service has been recorded; its attached alerts are resolved too.

    Args:
        incident_id: The incident to resolve.
        resolution: How service was restored.
    """
    incident = _incident(db, incident_id)
    if incident["status"] == "resolved":
        raise ToolError(f"incident {incident_id} is already resolved")
    if not incident["root_cause_service"]:
        raise ToolError(f"record the root-cause service of {incident_id} (update_incident) before resolving it")
    if not resolution.strip():
        raise ToolError("a resolution is required")
    db.execute("UPDATE incidents SET status = 'resolved', resolved_at = ?, resolution = ? WHERE incident_id = ?",
               (NOW, resolution, incident_id))
    db.execute("UPDATE alerts SET status = 'resolved' WHERE incident_id = ?", (incident_id,))
    _event(db, incident_id, f"resolved: {resolution}")
    return {"incident_id": incident_id, "status": "resolved", "resolved_at": NOW}


@world.tool(writes=True)
def file_postmortem(db: sqlite3.Connection, incident_id: str, owner_id: str, root_cause: str,
                    action_items: list[str]) -> dict[str, Any]:
    """File the draft postmortem of a resolved incident; it records the incident's related change.

    Args:
        incident_id: A resolved incident without a postmortem.
        owner_id: The engineer who owns the postmortem, e.g. E-111.
        root_cause: What caused the incident.
        action_items: Follow-up actions.
    """
    incident = _incident(db, incident_id)
    if incident["status"] != "resolved":
        raise ToolError(f"incident {incident_id} is {incident['status']}; resolve it before filing a postmortem")
    if one(db, "SELECT 1 FROM postmortems WHERE incident_id = ?", incident_id):
        raise ToolError(f"incident {incident_id} already has a postmortem")
    _engineer(db, owner_id)
    if not root_cause.strip() or not action_items:
        raise ToolError("a root cause and at least one action item are required")
    db.execute("INSERT INTO postmortems VALUES (?, ?, ?, ?, ?, ?, 'draft')",
               (incident_id, owner_id, root_cause, incident["related_change_id"], "; ".join(action_items), NOW))
    _event(db, incident_id, f"postmortem filed, owner {owner_id}")
    return {"incident_id": incident_id, "owner_id": owner_id, "related_change_id": incident["related_change_id"],
            "status": "draft"}


# ---------------------------------------------------------------- tasks

_MATRIX = ("Severity matrix: SEV1 if a tier-1 service is unavailable or has an error rate of 20% or more; SEV2 if a "
           "tier-1 service has an error rate of 5% up to 20% or p99 latency above its SLO, or a tier-2 service is "
           "unavailable or at 20%+ errors; SEV3 otherwise.")


def _new(initial: sqlite3.Connection, final: sqlite3.Connection, table: str, key: str) -> list[dict[str, Any]]:
    seen = {r[key] for r in rows(initial, f'SELECT "{key}" FROM "{table}"')}  # names come from the verifier
    return [r for r in rows(final, f'SELECT * FROM "{table}" ORDER BY "{key}"') if r[key] not in seen]


def _verify_triage(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    created = _new(initial, final, "incidents", "incident_id")
    incident = created[0] if len(created) == 1 else {}
    attached = sorted(r["alert_id"] for r in rows(final, "SELECT alert_id FROM alerts WHERE incident_id = ?",
                                                  incident.get("incident_id")))
    pages = [(p["incident_id"], p["engineer_id"]) for p in _new(initial, final, "pages", "page_id")]
    return [
        Check("exactly one new incident, on checkout-api", len(created) == 1
              and incident.get("service_id") == "checkout-api", f"new incidents {[c['incident_id'] for c in created]}"),
        Check("severity SEV1 (tier-1 service at 38% errors)", incident.get("severity") == "SEV1",
              f"severity {incident.get('severity')}"),
        Check("both checkout-api alerts attached, nothing else", attached == ["ALR-5016", "ALR-5017"],
              f"attached {attached}"),
        only_changed(initial, final, "alerts", "alert_id", {"ALR-5016", "ALR-5017"}),
        only_changed(initial, final, "incidents", "incident_id", {incident.get("incident_id")}),
        Check("paged only the current payments primary, Diego Alvarez (E-102)",
              pages == [(incident.get("incident_id"), "E-102")], f"pages {pages}"),
        Check("answer states the severity", "SEV1" in answer.upper().replace("SEV 1", "SEV1")),
    ]


world.task(ExecTask(
    id="triage_checkout_alerts", difficulty=1,
    instruction="Checkout API alerts just fired. Open a single incident on checkout-api covering all of its firing "
                "alerts, with the severity our matrix gives, and page the engineer who is primary on-call for the "
                "service's owning team right now. " + _MATRIX + " Tell me the incident, its severity and who you "
                "paged.",
    verify=_verify_triage,
    reference=[Call("list_alerts", {"status": "firing", "service_id": "checkout-api"}),
               Call("get_service", {"service_id": "checkout-api"}),
               Call("get_oncall_schedule", {"rotation": "payments"}),
               Call("create_incident", {"service_id": "checkout-api", "severity": "SEV1",
                                        "title": "Checkout API 38% 5xx errors and 4.2 s p99 latency",
                                        "alert_ids": ["ALR-5016", "ALR-5017"]}),
               Call("page_engineer", {"incident_id": "INC-7004", "engineer_id": "E-102",
                                      "message": "SEV1: checkout-api 38% 5xx, p99 4.2 s"})],
    answer="Opened INC-7004 on checkout-api as SEV1 (tier-1 service at 38% 5xx, p99 4,200 ms) with ALR-5016 and "
           "ALR-5017 attached, and paged Diego Alvarez (E-102), payments primary on-call since 09:00.",
    wrong=[Call("list_alerts", {"status": "firing", "service_id": "checkout-api"}),
           Call("get_service", {"service_id": "checkout-api"}),
           Call("get_oncall_schedule", {"rotation": "payments"}),
           Call("create_incident", {"service_id": "checkout-api", "severity": "SEV2",
                                    "title": "Checkout API errors", "alert_ids": ["ALR-5016", "ALR-5017"]}),
           Call("page_engineer", {"incident_id": "INC-7004", "engineer_id": "E-102",
                                  "message": "SEV2: checkout-api errors"})],
    wrong_answer="Opened INC-7004 as SEV2 (the alerts are P2) and paged Diego Alvarez.",
    rubric="checkout-api is tier 1 and ALR-5016 shows a 38% 5xx rate (≥ 20%), so the incident is SEV1 — the alerts' "
           "P2 label is not the severity. Attach ALR-5016 and ALR-5017 only. At 09:40 the payments primary is E-102 "
           "Diego Alvarez (shift SH-403 from 09:00); E-101 Farah Siddiqui's night shift ended at 09:00.",
))


def _verify_root_cause(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    incident = one(final, "SELECT * FROM incidents WHERE incident_id = 'INC-7003'") or {}
    pages = [(p["incident_id"], p["engineer_id"]) for p in _new(initial, final, "pages", "page_id")]
    return [
        Check("root cause recorded as inventory-db", incident.get("root_cause_service") == "inventory-db",
              f"root cause {incident.get('root_cause_service')}"),
        Check("linked to the inventory-db migration CHG-8814", incident.get("related_change_id") == "CHG-8814",
              f"change {incident.get('related_change_id')}"),
        Check("status identified, severity still SEV2",
              incident.get("status") == "identified" and incident.get("severity") == "SEV2",
              f"{incident.get('status')} / {incident.get('severity')}"),
        Check("paged only the on-call DBA with postgres skills, Arjun Patel (E-132)",
              pages == [("INC-7003", "E-132")], f"pages {pages}"),
        only_changed(initial, final, "incidents", "incident_id", {"INC-7003"}),
        only_changed(initial, final, "alerts", "alert_id", set()),
        Check("answer names the root-cause service and change", "inventory-db" in answer and "CHG-8814" in answer),
    ]


world.task(ExecTask(
    id="trace_orders_root_cause", difficulty=2,
    instruction="INC-7003 (orders-api returning 5xx) is still being investigated. Find the root cause: follow "
                "orders-api's dependencies, and theirs, down to the deepest service that has an alert in firing "
                "status. Record that service as the root cause, link the incident to the last change completed on "
                "that service before the incident opened, and move the incident to identified (keep its severity). "
                "Then page whichever engineer currently on call for that service's owning team (primary or "
                "secondary) has postgres skills. Report the root cause, the change and who you paged.",
    verify=_verify_root_cause,
    reference=[Call("get_incident", {"incident_id": "INC-7003"}),
               Call("get_service", {"service_id": "orders-api"}),
               Call("list_alerts", {"status": "firing"}),
               Call("get_service", {"service_id": "inventory-svc"}),
               Call("get_service", {"service_id": "inventory-db"}),
               Call("list_changes", {"service_id": "inventory-db"}),
               Call("update_incident", {"incident_id": "INC-7003", "status": "identified",
                                        "root_cause_service": "inventory-db", "related_change_id": "CHG-8814",
                                        "note": "inventory-db pool saturated after index migration; "
                                                "inventory-svc times out, orders-api returns 5xx"}),
               Call("get_oncall_schedule", {"rotation": "data-platform", "at": NOW}),
               Call("page_engineer", {"incident_id": "INC-7003", "engineer_id": "E-132",
                                      "message": "INC-7003: inventory-db connection pool at 98% after CHG-8814"})],
    answer="Root cause: inventory-db (ALR-5008, connection pool 98%), reached via orders-api -> inventory-svc -> "
           "inventory-db. INC-7003 is linked to CHG-8814 (index migration on stock_levels, completed 08:47) and is "
           "now identified, still SEV2. Paged Arjun Patel (E-132), the data-platform secondary with postgres skills.",
    wrong=[Call("get_incident", {"incident_id": "INC-7003"}),
           Call("get_service", {"service_id": "orders-api"}),
           Call("list_alerts", {"status": "firing"}),
           Call("list_changes", {"service_id": "inventory-svc"}),
           Call("update_incident", {"incident_id": "INC-7003", "status": "identified",
                                    "root_cause_service": "inventory-svc", "related_change_id": "CHG-8812"}),
           Call("get_oncall_schedule", {"rotation": "inventory", "at": NOW}),
           Call("page_engineer", {"incident_id": "INC-7003", "engineer_id": "E-142",
                                  "message": "INC-7003: inventory-svc v4.18.0 suspected"})],
    wrong_answer="Root cause is inventory-svc, whose v4.18.0 deploy CHG-8812 went out at 08:30; paged Ahmed Hassan.",
    rubric="orders-api depends on inventory-svc, orders-db and auth-svc. inventory-svc (ALR-5010, firing) depends on "
           "inventory-db (ALR-5008, firing) — the deepest firing service; auth-svc's alerts are acknowledged and "
           "session-cache's is resolved. The last completed inventory-db change before 08:58 is CHG-8814 (08:47); "
           "CHG-8819 is only scheduled. At 09:40 data-platform has Marta Kowalczyk (primary, kafka/spark) and Arjun "
           "Patel (secondary, postgres): page E-132. Stopping at inventory-svc / CHG-8812 is wrong.",
))


def _verify_closeout(initial: sqlite3.Connection, final: sqlite3.Connection, answer: str) -> list[Check]:
    incident = one(final, "SELECT * FROM incidents WHERE incident_id = 'INC-7001'") or {}
    postmortem = one(final, "SELECT * FROM postmortems WHERE incident_id = 'INC-7001'") or {}
    alerts = {r["alert_id"]: r["status"] for r in rows(final, "SELECT * FROM alerts WHERE incident_id = 'INC-7001'")}
    return [
        Check("escalated to SEV1 (peak 31% login errors on tier-1 auth-svc)", incident.get("severity") == "SEV1",
              f"severity {incident.get('severity')}"),
        Check("resolved", incident.get("status") == "resolved" and bool(incident.get("resolved_at")),
              f"status {incident.get('status')}"),
        Check("root cause auth-svc, change CHG-8807 (the rolled-back deploy)",
              incident.get("root_cause_service") == "auth-svc" and incident.get("related_change_id") == "CHG-8807",
              f"{incident.get('root_cause_service')} / {incident.get('related_change_id')}"),
        Check("postmortem owned by Yusuf Demir (E-111), identity primary at 02:15",
              postmortem.get("owner_id") == "E-111", f"owner {postmortem.get('owner_id')}"),
        Check("postmortem cites CHG-8807", postmortem.get("related_change_id") == "CHG-8807",
              f"change {postmortem.get('related_change_id')}"),
        Check("its alerts resolved", alerts == {"ALR-5001": "resolved", "ALR-5003": "resolved"}, f"alerts {alerts}"),
        only_changed(initial, final, "incidents", "incident_id", {"INC-7001"}),
        only_changed(initial, final, "alerts", "alert_id", {"ALR-5001", "ALR-5003"}),
        only_changed(initial, final, "postmortems", "incident_id", {"INC-7001"}),
    ]


world.task(ExecTask(
    id="escalate_and_close_auth_incident", difficulty=3,
    instruction="INC-7001 (login failures overnight) was mitigated at 03:20 by rolling back the auth-svc change "
                "that caused it. Close it out properly. Its severity must reflect the worst impact shown by the "
                "alerts attached to it, per the matrix — escalate it if it was under-classified. " + _MATRIX +
                " Record the root-cause service and the rolled-back change, resolve the incident, and file its "
                "postmortem. The postmortem owner is the engineer who was primary on-call for the service's owning "
                "team when the incident was opened. Summarise what you did.",
    verify=_verify_closeout,
    reference=[Call("get_incident", {"incident_id": "INC-7001"}),
               Call("get_service", {"service_id": "auth-svc"}),
               Call("list_changes", {"service_id": "auth-svc"}),
               Call("update_incident", {"incident_id": "INC-7001", "severity": "SEV1",
                                        "root_cause_service": "auth-svc", "related_change_id": "CHG-8807",
                                        "note": "escalated: ALR-5003 peaked at 31% login errors on a tier-1 "
                                                "service"}),
               Call("get_oncall_schedule", {"rotation": "identity", "at": "2025-11-14T02:15:00Z"}),
               Call("resolve_incident", {"incident_id": "INC-7001",
                                         "resolution": "Rolled back auth-svc v2.31.0 (CHG-8807); login errors at "
                                                       "baseline since 03:20"}),
               Call("file_postmortem", {"incident_id": "INC-7001", "owner_id": "E-111",
                                        "root_cause": "auth-svc v2.31.0 token refresh refactor (CHG-8807) broke "
                                                      "logins; up to 31% failures",
                                        "action_items": ["add token refresh integration tests",
                                                         "canary auth-svc deploys with login error-rate gate"]})],
    answer="INC-7001 escalated from SEV3 to SEV1 (ALR-5003: 31% login errors on tier-1 auth-svc), root cause "
           "auth-svc with change CHG-8807 (v2.31.0, rolled back 03:18), resolved, and the postmortem filed with owner "
           "Yusuf Demir (E-111), identity primary on-call at 02:15.",
    wrong=[Call("get_incident", {"incident_id": "INC-7001"}),
           Call("list_changes", {"service_id": "auth-svc"}),
           Call("update_incident", {"incident_id": "INC-7001", "severity": "SEV2",
                                    "root_cause_service": "auth-svc", "related_change_id": "CHG-8807"}),
           Call("get_oncall_schedule", {"rotation": "identity", "at": NOW}),
           Call("resolve_incident", {"incident_id": "INC-7001", "resolution": "rolled back"}),
           Call("file_postmortem", {"incident_id": "INC-7001", "owner_id": "E-112",
                                    "root_cause": "bad deploy", "action_items": ["more tests"]})],
    wrong_answer="INC-7001 set to SEV2 (12.4% login errors), resolved, postmortem owned by Clara Jensen (on call).",
    rubric="Attached alerts: ALR-5001 12.4% and ALR-5003 31.0% login errors; auth-svc is tier 1, so the worst "
           "impact (31% ≥ 20%) makes it SEV1. The rolled-back change is CHG-8807 (v2.31.0 deployed 01:55, rolled "
           "back 03:18) — not CHG-8815, the fixed redeploy at 08:53. At 02:15 the identity primary was Yusuf Demir "
           "(E-111, SH-411); Clara Jensen (E-112) only took over at 09:00. Resolve (alerts resolve with it) and file "
           "the postmortem owned by E-111 citing CHG-8807.",
))
