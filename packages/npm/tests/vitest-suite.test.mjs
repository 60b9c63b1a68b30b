// The same packages under Vitest: one emulator for the run (globalSetup:
// "svc-emulator/global-setup"), taken with connect(), put back before each test.
import { test, expect, beforeEach } from "vitest";
import { connect } from "svc-emulator";

const PRODUCTS = "/projects/demo/prod/shop/models/products";
const emulator = connect();

beforeEach(() => emulator.startOver());

test("the run's emulator is the global setup's", () => {
  expect(emulator).not.toBeNull();
  expect(emulator.project).toBe("demo");
  expect(process.env.SVC_API_KEY).toBe(emulator.apiKey);
});

test("a create, then the state at start again", async () => {
  const before = (await emulator.request("GET", PRODUCTS)).body.count;
  const { status } = await emulator.request("POST", PRODUCTS, { sku: "LAMP-1", name: "Lamp", price: 9.5 });
  expect(status).toBe(201);
  await emulator.assertReceived({ method: "POST", model: "products", exactly: 1 });
  await emulator.startOver();
  expect((await emulator.request("GET", PRODUCTS)).body.count).toBe(before);
});
