CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    category TEXT,
    price REAL NOT NULL,
    in_stock BOOLEAN NOT NULL DEFAULT 1
);
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    city TEXT,
    vip BOOLEAN NOT NULL DEFAULT 0,
    score INTEGER,
    birth_date DATE,
    created_at DATETIME NOT NULL,
    notes TEXT
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    product_id INTEGER REFERENCES products(id),
    status TEXT NOT NULL DEFAULT 'new',
    total REAL NOT NULL,
    quantity INTEGER NOT NULL,
    ordered_on DATE NOT NULL,
    shipped_at DATETIME,
    note TEXT
);
CREATE INDEX orders_customer_id ON orders(customer_id);
CREATE INDEX orders_ordered_on ON orders(ordered_on);

BEGIN;
WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 50)
INSERT INTO products (id, sku, name, category, price, in_stock)
SELECT n,
    printf('SKU-%04d', n),
    json_extract('["Small","Large","Classic","Deluxe","Eco","Smart","Vintage"]', '$[' || (n % 7) || ']')
        || ' ' ||
    json_extract('["lamp","chair","kettle","notebook","backpack","crème brûlée set","umbrella","thé vert"]', '$[' || (n * 3 % 8) || ']'),
    CASE WHEN n % 11 = 0 THEN NULL
         ELSE json_extract('["books","garden","kitchen","toys","électronique"]', '$[' || (n % 5) || ']') END,
    round(((n * 7919) % 20000) / 100.0 + 0.99, 2),
    n % 6 <> 0
FROM seq;

WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 1000)
INSERT INTO customers (id, name, email, city, vip, score, birth_date, created_at, notes)
SELECT n,
    json_extract('["Anna","José","Zoë","Łukasz","Søren","Chloé","Jürgen","Ana María","Đorđe","Siobhán","Renée","Mohammed","Yuki","Olga","Peter","Fatima","Liam","Emma","Noah","Ingrid","Ömer","Ἀλέξανδρος","Li","Grace"]', '$[' || (n * 7 % 24) || ']')
        || ' ' ||
    json_extract('["Müller","García","Núñez","Østergaard","O''Brien","Dvořák","Yılmaz","Nakamura","Кузнецов","Smith","Johnson","Rossi","Dubois","Kowalski","Nguyen","Silva","Jensen","Novák","Papadopoulos","Brown","李","Schmidt"]', '$[' || (n * 13 % 22) || ']'),
    'customer' || n || '@example.com',
    CASE WHEN n % 10 = 0 THEN NULL
         ELSE json_extract('["Paris","Berlin","Kraków","São Paulo","Zürich","Tokyo","New York","Reykjavík","London","Madrid","Montréal","Oslo"]', '$[' || (n * 17 % 12) || ']') END,
    n % 7 = 0,
    CASE WHEN n % 9 = 0 THEN NULL ELSE (n * 37) % 101 END,
    CASE WHEN n % 5 = 0 THEN NULL ELSE date('1950-01-01', '+' || ((n * 7919) % 18250) || ' days') END,
    strftime('%Y-%m-%d %H:%M:%S', '2024-01-01 00:00:00', '+' || (n * 63072 + (n * 7919) % 60000) || ' seconds'),
    CASE n % 4 WHEN 0 THEN NULL WHEN 1 THEN '' ELSE 'Note #' || n END
FROM seq;

WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 12000)
INSERT INTO orders (id, customer_id, product_id, status, total, quantity, ordered_on, shipped_at, note)
SELECT n, customer_id, product_id, status, total, quantity, ordered_on,
    CASE WHEN status IN ('shipped', 'delivered')
         THEN strftime('%Y-%m-%d %H:%M:%S', ordered_on, '+' || (20 + n % 100) || ' hours') END,
    note
FROM (
    SELECT n,
        1 + (n * 7919) % 1000 AS customer_id,
        CASE WHEN n % 25 = 0 THEN NULL ELSE 1 + (n * 31) % 50 END AS product_id,
        json_extract('["new","paid","shipped","delivered","cancelled","refunded"]', '$[' || ((n * 40507) % 6) || ']') AS status,
        round(((n * 48271) % 100000) / 100.0 + 1, 2) AS total,
        1 + (n * 13) % 9 AS quantity,
        date('2024-01-01', '+' || (n * 730 / 12000 + n % 3) || ' days') AS ordered_on,
        CASE n % 8 WHEN 0 THEN 'Livrer après 18h — merci' WHEN 1 THEN 'Gift wrap: "yes", 100% please'
                   WHEN 2 THEN '' ELSE NULL END AS note
    FROM seq
);
COMMIT;
