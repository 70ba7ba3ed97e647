CREATE TABLE substations (
    substation_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    district TEXT NOT NULL
);
CREATE TABLE feeders (
    feeder_id TEXT PRIMARY KEY,
    substation_id TEXT NOT NULL REFERENCES substations(substation_id),
    district TEXT NOT NULL,
    rating_mw REAL NOT NULL,
    load_mw REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('energized', 'partial', 'de-energized', 'backfed'))
);
CREATE TABLE tie_switches (
    switch_id TEXT PRIMARY KEY,
    feeder_a TEXT NOT NULL REFERENCES feeders(feeder_id),
    feeder_b TEXT NOT NULL REFERENCES feeders(feeder_id),
    location TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'closed', 'out_of_service')),
    note TEXT
);
CREATE TABLE outages (
    outage_id TEXT PRIMARY KEY,
    feeder_id TEXT NOT NULL REFERENCES feeders(feeder_id),
    district TEXT NOT NULL,
    location TEXT NOT NULL,
    cause TEXT NOT NULL,
    reported_at TEXT NOT NULL,
    customers_affected INTEGER NOT NULL,
    critical_facilities TEXT NOT NULL DEFAULT '',
    load_mw REAL NOT NULL,
    required_skill TEXT NOT NULL CHECK (required_skill IN ('overhead', 'underground', 'tree', 'substation')),
    status TEXT NOT NULL CHECK (status IN ('reported', 'dispatched', 'backfed', 'restored')),
    restored_at TEXT,
    backfeed_switch TEXT REFERENCES tie_switches(switch_id)
);
CREATE TABLE crews (
    crew_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    skills TEXT NOT NULL,
    district TEXT NOT NULL,
    shift_start TEXT NOT NULL,
    shift_end TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('available', 'assigned', 'off_shift'))
);
CREATE TABLE work_orders (
    wo_id TEXT PRIMARY KEY,
    outage_id TEXT NOT NULL REFERENCES outages(outage_id),
    crew_id TEXT NOT NULL REFERENCES crews(crew_id),
    created_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'closed', 'cancelled')),
    closed_at TEXT,
    notes TEXT
);
