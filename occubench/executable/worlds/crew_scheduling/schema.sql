CREATE TABLE crew_members (
    crew_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    rank TEXT NOT NULL CHECK (rank IN ('CPT', 'FO', 'FA')),
    base TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'sick', 'leave')),
    duty_hours_7d REAL NOT NULL
);
CREATE TABLE type_ratings (
    rating_id INTEGER PRIMARY KEY,
    crew_id TEXT NOT NULL REFERENCES crew_members(crew_id),
    aircraft_type TEXT NOT NULL,
    valid_until TEXT NOT NULL,
    UNIQUE (crew_id, aircraft_type)
);
CREATE TABLE flights (
    flight_id TEXT PRIMARY KEY,
    flight_date TEXT NOT NULL,
    origin TEXT NOT NULL,
    destination TEXT NOT NULL,
    departure TEXT NOT NULL,
    arrival TEXT NOT NULL,
    aircraft_type TEXT NOT NULL,
    duty_hours REAL NOT NULL,
    cabin_required INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('scheduled', 'cancelled'))
);
CREATE TABLE assignments (
    assignment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    flight_id TEXT NOT NULL REFERENCES flights(flight_id),
    crew_id TEXT NOT NULL REFERENCES crew_members(crew_id),
    position TEXT NOT NULL CHECK (position IN ('captain', 'first_officer', 'cabin')),
    UNIQUE (flight_id, crew_id)
);
CREATE TABLE status_log (
    log_id INTEGER PRIMARY KEY AUTOINCREMENT,
    crew_id TEXT NOT NULL REFERENCES crew_members(crew_id),
    old_status TEXT NOT NULL,
    new_status TEXT NOT NULL,
    note TEXT,
    logged_at TEXT NOT NULL
);
