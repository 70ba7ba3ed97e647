CREATE TABLE patients (
    patient_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    date_of_birth TEXT NOT NULL,
    phone TEXT NOT NULL,
    insurer TEXT
);
CREATE TABLE allergies (
    patient_id TEXT NOT NULL REFERENCES patients(patient_id),
    allergen TEXT NOT NULL,
    reaction TEXT NOT NULL,
    PRIMARY KEY (patient_id, allergen)
);
CREATE TABLE drugs (
    drug_id TEXT PRIMARY KEY,
    generic_name TEXT NOT NULL,
    strength TEXT NOT NULL,
    form TEXT NOT NULL,
    allergy_class TEXT NOT NULL,
    stock_qty INTEGER NOT NULL CHECK (stock_qty >= 0),
    reorder_point INTEGER NOT NULL,
    par_level INTEGER NOT NULL,
    pack_size INTEGER NOT NULL,
    supplier TEXT NOT NULL
);
CREATE TABLE interactions (
    interaction_id TEXT PRIMARY KEY,
    generic_a TEXT NOT NULL,
    generic_b TEXT NOT NULL,
    severity TEXT NOT NULL CHECK (severity IN ('minor', 'moderate', 'major', 'contraindicated')),
    effect TEXT NOT NULL
);
CREATE TABLE prescriptions (
    rx_id TEXT PRIMARY KEY,
    patient_id TEXT NOT NULL REFERENCES patients(patient_id),
    drug_id TEXT NOT NULL REFERENCES drugs(drug_id),
    prescriber TEXT NOT NULL,
    written_date TEXT NOT NULL,
    expires_on TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    days_supply INTEGER NOT NULL,
    directions TEXT NOT NULL,
    fills_remaining INTEGER NOT NULL CHECK (fills_remaining >= 0),
    status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'on_hold', 'completed', 'cancelled')),
    last_filled TEXT,
    hold_reason TEXT
);
CREATE TABLE dispensings (
    dispense_id INTEGER PRIMARY KEY AUTOINCREMENT,
    rx_id TEXT NOT NULL REFERENCES prescriptions(rx_id),
    drug_id TEXT NOT NULL REFERENCES drugs(drug_id),
    quantity INTEGER NOT NULL,
    dispensed_on TEXT NOT NULL,
    note TEXT
);
CREATE TABLE purchase_orders (
    po_id INTEGER PRIMARY KEY AUTOINCREMENT,
    drug_id TEXT NOT NULL REFERENCES drugs(drug_id),
    packs INTEGER NOT NULL,
    units INTEGER NOT NULL,
    supplier TEXT NOT NULL,
    ordered_on TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'received', 'cancelled'))
);
