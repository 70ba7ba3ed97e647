CREATE TABLE clinicians (
    clinician_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    specialty TEXT NOT NULL,
    site TEXT NOT NULL
);
CREATE TABLE patients (
    patient_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    date_of_birth TEXT NOT NULL,
    phone TEXT NOT NULL,
    gp_practice TEXT NOT NULL
);
CREATE TABLE referrals (
    referral_id TEXT PRIMARY KEY,
    patient_id TEXT NOT NULL REFERENCES patients(patient_id),
    specialty TEXT NOT NULL,
    urgency TEXT NOT NULL CHECK (urgency IN ('urgent', 'soon', 'routine')),
    received_on TEXT NOT NULL,
    referring_gp TEXT NOT NULL,
    reason TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('waiting', 'booked', 'closed'))
);
CREATE TABLE slots (
    slot_id TEXT PRIMARY KEY,
    clinician_id TEXT NOT NULL REFERENCES clinicians(clinician_id),
    starts_at TEXT NOT NULL,
    minutes INTEGER NOT NULL,
    slot_type TEXT NOT NULL CHECK (slot_type IN ('new', 'follow_up')),
    status TEXT NOT NULL CHECK (status IN ('open', 'booked', 'blocked'))
);
CREATE TABLE appointments (
    appt_id TEXT PRIMARY KEY,
    patient_id TEXT NOT NULL REFERENCES patients(patient_id),
    slot_id TEXT NOT NULL REFERENCES slots(slot_id),
    referral_id TEXT REFERENCES referrals(referral_id),
    status TEXT NOT NULL CHECK (status IN ('booked', 'cancelled', 'attended', 'no_show')),
    booked_on TEXT NOT NULL,
    note TEXT
);
CREATE TABLE waitlist (
    entry_id TEXT PRIMARY KEY,
    patient_id TEXT NOT NULL REFERENCES patients(patient_id),
    referral_id TEXT NOT NULL REFERENCES referrals(referral_id),
    specialty TEXT NOT NULL,
    urgency TEXT NOT NULL CHECK (urgency IN ('urgent', 'soon', 'routine')),
    preferred_clinician_id TEXT REFERENCES clinicians(clinician_id),
    added_on TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('waiting', 'booked', 'removed'))
);
CREATE TABLE absences (
    absence_id INTEGER PRIMARY KEY AUTOINCREMENT,
    clinician_id TEXT NOT NULL REFERENCES clinicians(clinician_id),
    absence_date TEXT NOT NULL,
    reason TEXT NOT NULL,
    UNIQUE (clinician_id, absence_date)
);
