CREATE TABLE importers (
    importer_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    trusted_trader INTEGER NOT NULL CHECK (trusted_trader IN (0, 1))
);
CREATE TABLE shipments (
    shipment_id TEXT PRIMARY KEY,
    importer_id TEXT NOT NULL REFERENCES importers(importer_id),
    port TEXT NOT NULL,
    conveyance TEXT NOT NULL,
    arrival_date TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('arrived', 'held', 'released')),
    hold_reason TEXT,
    released_on TEXT
);
CREATE TABLE declarations (
    decl_id TEXT PRIMARY KEY,
    shipment_id TEXT NOT NULL REFERENCES shipments(shipment_id),
    hs_code TEXT NOT NULL,
    description TEXT NOT NULL,
    origin_country TEXT NOT NULL,
    quantity REAL NOT NULL,
    unit TEXT NOT NULL,
    invoice_value REAL NOT NULL,
    freight REAL NOT NULL,
    insurance REAL NOT NULL,
    preference_claimed TEXT,
    origin_certificate TEXT,
    certificate_valid_until TEXT,
    status TEXT NOT NULL CHECK (status IN ('lodged', 'assessed', 'flagged')),
    customs_value REAL,
    duty_rate REAL,
    duty_amount REAL,
    assessment_note TEXT,
    flag_reason TEXT
);
CREATE TABLE tariff_rates (
    hs_code TEXT NOT NULL,
    origin_country TEXT NOT NULL,
    rate_type TEXT NOT NULL CHECK (rate_type IN ('mfn', 'additional')),
    rate_pct REAL NOT NULL,
    measure TEXT NOT NULL,
    PRIMARY KEY (hs_code, origin_country, rate_type)
);
CREATE TABLE trade_agreements (
    agreement_code TEXT PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE agreement_members (
    agreement_code TEXT NOT NULL REFERENCES trade_agreements(agreement_code),
    country TEXT NOT NULL,
    PRIMARY KEY (agreement_code, country)
);
CREATE TABLE preferential_rates (
    agreement_code TEXT NOT NULL REFERENCES trade_agreements(agreement_code),
    hs_prefix TEXT NOT NULL,
    rate_pct REAL NOT NULL,
    PRIMARY KEY (agreement_code, hs_prefix)
);
CREATE TABLE reference_prices (
    hs_code TEXT PRIMARY KEY,
    unit TEXT NOT NULL,
    reference_unit_price REAL NOT NULL,
    updated_on TEXT NOT NULL
);
CREATE TABLE inspections (
    inspection_id INTEGER PRIMARY KEY AUTOINCREMENT,
    shipment_id TEXT NOT NULL REFERENCES shipments(shipment_id),
    kind TEXT NOT NULL CHECK (kind IN ('documentary', 'physical', 'x-ray')),
    status TEXT NOT NULL CHECK (status IN ('scheduled', 'passed', 'failed')),
    ordered_on TEXT NOT NULL,
    reason TEXT NOT NULL,
    result TEXT
);
