import { describe, expect, it } from "vitest";
import { detectServiceFromUrl } from "../../../src/address/storageHost.js";

describe("detectServiceFromUrl", () => {
  it.each([
    ["https://myacct.table.core.windows.net/orders", "table"],
    ["https://myacct.blob.core.windows.net/c/b", "blob"],
    ["https://myacct.queue.core.windows.net/q/messages", "queue"],
    ["https://MYACCT.TABLE.CORE.WINDOWS.NET/", "table"],
    ["https://myacct-secondary.blob.core.windows.net/c", "blob"],
    ["https://myacct.blob.core.chinacloudapi.cn/c", "blob"],
    ["https://myacct.table.core.usgovcloudapi.net/t", "table"],
    ["https://myacct.queue.core.cloudapi.de/q", "queue"],
    ["https://myacct.z01.blob.storage.azure.net/c", "blob"],
    ["https://my-cosmos.table.cosmos.azure.com/t", "table"],
    ["https://myacct.table.core.windows.net:443/t?x=1", "table"],
    ["http://devstoreaccount1.blob.localhost:10000/c", "blob"],
  ] as const)("%s -> %s", (url, service) => {
    expect(detectServiceFromUrl(url)).toBe(service);
  });

  it.each([
    "http://127.0.0.1:10002/devstoreaccount1/orders",
    "http://127.0.0.1:10000/devstoreaccount1/c",
    "http://localhost:10001/devstoreaccount1/q",
    "http://[::1]:10002/devstoreaccount1/t",
    "http://azurite:10002/devstoreaccount1/t",
    "https://myacct.dfs.core.windows.net/fs",
    "https://myacct.file.core.windows.net/share",
    "https://cdn.example.com/c/b",
    "https://table.core.windows.net/",
    "not a url",
    "",
  ])("%s -> undefined", (url) => {
    expect(detectServiceFromUrl(url)).toBeUndefined();
  });
});
