CREATE TABLE courses (
    course_code TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    credits INTEGER NOT NULL,
    department TEXT NOT NULL
);
CREATE TABLE prerequisites (
    course_code TEXT NOT NULL REFERENCES courses(course_code),
    prereq_code TEXT NOT NULL REFERENCES courses(course_code),
    min_grade TEXT NOT NULL,
    PRIMARY KEY (course_code, prereq_code)
);
CREATE TABLE students (
    student_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    program TEXT NOT NULL,
    class_year INTEGER NOT NULL,
    credit_limit INTEGER NOT NULL,
    hold TEXT,
    advisor TEXT NOT NULL
);
CREATE TABLE completed_courses (
    student_id TEXT NOT NULL REFERENCES students(student_id),
    course_code TEXT NOT NULL REFERENCES courses(course_code),
    term TEXT NOT NULL,
    grade TEXT NOT NULL,
    PRIMARY KEY (student_id, course_code)
);
CREATE TABLE sections (
    section_id TEXT PRIMARY KEY,
    course_code TEXT NOT NULL REFERENCES courses(course_code),
    term TEXT NOT NULL,
    days TEXT NOT NULL,
    start_time TEXT NOT NULL,
    end_time TEXT NOT NULL,
    instructor TEXT NOT NULL,
    room TEXT NOT NULL,
    capacity INTEGER NOT NULL,
    enrolled INTEGER NOT NULL,
    CHECK (enrolled BETWEEN 0 AND capacity)
);
CREATE TABLE enrollments (
    enrollment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    student_id TEXT NOT NULL REFERENCES students(student_id),
    section_id TEXT NOT NULL REFERENCES sections(section_id),
    status TEXT NOT NULL CHECK (status IN ('enrolled', 'waitlisted', 'dropped')),
    waitlist_position INTEGER,
    updated_at TEXT NOT NULL,
    UNIQUE (student_id, section_id)
);
