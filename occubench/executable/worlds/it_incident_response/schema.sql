CREATE TABLE services (
    service_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    tier INTEGER NOT NULL CHECK (tier IN (1, 2, 3)),
    owner_team TEXT NOT NULL,
    customer_facing INTEGER NOT NULL CHECK (customer_facing IN (0, 1)),
    slo_p99_ms INTEGER NOT NULL,
    description TEXT NOT NULL
);
CREATE TABLE service_dependencies (
    service_id TEXT NOT NULL REFERENCES services(service_id),
    depends_on TEXT NOT NULL REFERENCES services(service_id),
    PRIMARY KEY (service_id, depends_on)
);
CREATE TABLE engineers (
    engineer_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    team TEXT NOT NULL,
    skills TEXT NOT NULL,
    timezone TEXT NOT NULL
);
CREATE TABLE oncall_shifts (
    shift_id TEXT PRIMARY KEY,
    rotation TEXT NOT NULL,
    engineer_id TEXT NOT NULL REFERENCES engineers(engineer_id),
    role TEXT NOT NULL CHECK (role IN ('primary', 'secondary')),
    starts_at TEXT NOT NULL,
    ends_at TEXT NOT NULL
);
CREATE TABLE changes (
    change_id TEXT PRIMARY KEY,
    service_id TEXT NOT NULL REFERENCES services(service_id),
    summary TEXT NOT NULL,
    author_id TEXT NOT NULL REFERENCES engineers(engineer_id),
    status TEXT NOT NULL CHECK (status IN ('scheduled', 'completed', 'rolled_back')),
    deployed_at TEXT NOT NULL,
    rolled_back_at TEXT
);
CREATE TABLE incidents (
    incident_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    service_id TEXT NOT NULL REFERENCES services(service_id),
    severity TEXT NOT NULL CHECK (severity IN ('SEV1', 'SEV2', 'SEV3')),
    status TEXT NOT NULL CHECK (status IN ('open', 'investigating', 'identified', 'mitigated', 'resolved')),
    opened_at TEXT NOT NULL,
    mitigated_at TEXT,
    resolved_at TEXT,
    root_cause_service TEXT REFERENCES services(service_id),
    related_change_id TEXT REFERENCES changes(change_id),
    resolution TEXT
);
CREATE TABLE alerts (
    alert_id TEXT PRIMARY KEY,
    service_id TEXT NOT NULL REFERENCES services(service_id),
    fired_at TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    threshold REAL NOT NULL,
    priority TEXT NOT NULL CHECK (priority IN ('P1', 'P2', 'P3', 'P4')),
    status TEXT NOT NULL CHECK (status IN ('firing', 'acknowledged', 'resolved')),
    incident_id TEXT REFERENCES incidents(incident_id),
    summary TEXT NOT NULL
);
CREATE TABLE pages (
    page_id INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id TEXT NOT NULL REFERENCES incidents(incident_id),
    engineer_id TEXT NOT NULL REFERENCES engineers(engineer_id),
    paged_at TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE TABLE incident_events (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id TEXT NOT NULL REFERENCES incidents(incident_id),
    at TEXT NOT NULL,
    event TEXT NOT NULL
);
CREATE TABLE postmortems (
    incident_id TEXT PRIMARY KEY REFERENCES incidents(incident_id),
    owner_id TEXT NOT NULL REFERENCES engineers(engineer_id),
    root_cause TEXT NOT NULL,
    related_change_id TEXT REFERENCES changes(change_id),
    action_items TEXT NOT NULL,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('draft', 'in_review', 'published'))
);
