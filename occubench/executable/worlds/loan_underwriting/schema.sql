CREATE TABLE applicants (
    applicant_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    annual_income REAL NOT NULL,
    monthly_debt_payments REAL NOT NULL,
    credit_score INTEGER NOT NULL CHECK (credit_score BETWEEN 300 AND 850),
    employment_status TEXT NOT NULL CHECK (employment_status IN ('full_time', 'part_time', 'self_employed', 'retired')),
    years_employed INTEGER NOT NULL
);
CREATE TABLE products (
    product_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    loan_type TEXT NOT NULL CHECK (loan_type IN ('personal', 'auto', 'home_equity')),
    min_amount REAL NOT NULL,
    max_amount REAL NOT NULL,
    max_term_months INTEGER NOT NULL,
    min_credit_score INTEGER NOT NULL,
    max_dti REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'retired'))
);
CREATE TABLE rate_tiers (
    product_id TEXT NOT NULL REFERENCES products(product_id),
    tier TEXT NOT NULL,
    min_score INTEGER NOT NULL,
    max_score INTEGER NOT NULL,
    apr REAL NOT NULL,
    PRIMARY KEY (product_id, tier)
);
CREATE TABLE applications (
    application_id TEXT PRIMARY KEY,
    applicant_id TEXT NOT NULL REFERENCES applicants(applicant_id),
    product_id TEXT NOT NULL REFERENCES products(product_id),
    amount REAL NOT NULL,
    term_months INTEGER NOT NULL,
    purpose TEXT NOT NULL,
    submitted_on TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'declined', 'funded', 'withdrawn')),
    apr REAL,
    monthly_payment REAL,
    underwriter TEXT,
    decided_on TEXT,
    decision_reason TEXT
);
CREATE TABLE decisions (
    decision_id INTEGER PRIMARY KEY AUTOINCREMENT,
    application_id TEXT NOT NULL REFERENCES applications(application_id),
    action TEXT NOT NULL CHECK (action IN ('approved', 'declined', 'reversed', 'funded', 'withdrawn')),
    apr REAL,
    reason TEXT NOT NULL,
    underwriter TEXT NOT NULL,
    decided_on TEXT NOT NULL
);
