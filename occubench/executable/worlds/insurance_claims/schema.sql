CREATE TABLE policies (
    policy_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    product TEXT NOT NULL CHECK (product IN ('home', 'auto')),
    coverage_limit REAL NOT NULL,
    deductible REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'lapsed')),
    start_date TEXT NOT NULL,
    end_date TEXT NOT NULL
);
CREATE TABLE adjusters (
    adjuster_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    specialty TEXT NOT NULL,
    open_cases INTEGER NOT NULL
);
CREATE TABLE claims (
    claim_id TEXT PRIMARY KEY,
    policy_id TEXT NOT NULL REFERENCES policies(policy_id),
    incident_date TEXT NOT NULL,
    category TEXT NOT NULL,
    amount_claimed REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'approved', 'denied', 'paid')),
    approved_amount REAL,
    adjuster_id TEXT REFERENCES adjusters(adjuster_id),
    decision_reason TEXT
);
CREATE TABLE payments (
    payment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    claim_id TEXT NOT NULL REFERENCES claims(claim_id),
    amount REAL NOT NULL
);
