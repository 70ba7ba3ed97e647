CREATE TABLE skus (
    sku TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    uom TEXT NOT NULL,
    rotation TEXT NOT NULL CHECK (rotation IN ('FEFO', 'FIFO')),
    unit_cost REAL NOT NULL
);
CREATE TABLE locations (
    location_id TEXT PRIMARY KEY,
    zone TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('pick', 'reserve', 'receiving', 'quarantine')),
    status TEXT NOT NULL CHECK (status IN ('active', 'hold')),
    hold_reason TEXT
);
CREATE TABLE inventory (
    inv_id INTEGER PRIMARY KEY,
    sku TEXT NOT NULL REFERENCES skus(sku),
    location_id TEXT NOT NULL REFERENCES locations(location_id),
    lot TEXT NOT NULL,
    received_date TEXT NOT NULL,
    expiry_date TEXT,
    qty INTEGER NOT NULL CHECK (qty >= 0),
    qty_allocated INTEGER NOT NULL DEFAULT 0 CHECK (qty_allocated >= 0 AND qty_allocated <= qty)
);
CREATE TABLE purchase_orders (
    po_id TEXT PRIMARY KEY,
    supplier TEXT NOT NULL,
    order_date TEXT NOT NULL,
    expected_date TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'partially_received', 'received', 'closed_short')),
    close_reason TEXT
);
CREATE TABLE po_lines (
    po_line_id INTEGER PRIMARY KEY,
    po_id TEXT NOT NULL REFERENCES purchase_orders(po_id),
    line_no INTEGER NOT NULL,
    sku TEXT NOT NULL REFERENCES skus(sku),
    qty_ordered INTEGER NOT NULL,
    qty_received INTEGER NOT NULL DEFAULT 0,
    UNIQUE (po_id, line_no)
);
CREATE TABLE outbound_orders (
    order_id TEXT PRIMARY KEY,
    customer TEXT NOT NULL,
    ship_date TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'partially_allocated', 'allocated', 'shipped', 'cancelled'))
);
CREATE TABLE order_lines (
    order_line_id INTEGER PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES outbound_orders(order_id),
    line_no INTEGER NOT NULL,
    sku TEXT NOT NULL REFERENCES skus(sku),
    qty_ordered INTEGER NOT NULL,
    qty_allocated INTEGER NOT NULL DEFAULT 0,
    UNIQUE (order_id, line_no)
);
CREATE TABLE allocations (
    allocation_id INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id TEXT NOT NULL REFERENCES outbound_orders(order_id),
    line_no INTEGER NOT NULL,
    inv_id INTEGER NOT NULL REFERENCES inventory(inv_id),
    qty INTEGER NOT NULL CHECK (qty > 0)
);
CREATE TABLE cycle_counts (
    count_id TEXT PRIMARY KEY,
    inv_id INTEGER NOT NULL REFERENCES inventory(inv_id),
    count_date TEXT NOT NULL,
    counted_by TEXT NOT NULL,
    system_qty INTEGER NOT NULL,
    counted_qty INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('counted', 'posted', 'recount'))
);
CREATE TABLE adjustments (
    adjustment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    inv_id INTEGER NOT NULL REFERENCES inventory(inv_id),
    sku TEXT NOT NULL,
    location_id TEXT NOT NULL,
    delta INTEGER NOT NULL,
    value REAL NOT NULL,
    reason TEXT NOT NULL,
    reference TEXT,
    posted_on TEXT NOT NULL
);
