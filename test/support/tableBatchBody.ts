/** A one-change `$batch` body as the Tables SDK writes it: a DELETE of `t(PartitionKey='pk',RowKey='r')` under `accountUrl`. */
export function deleteBatchBody(accountUrl: string): string {
  return [
    "--batch_a",
    "content-type: multipart/mixed; boundary=changeset_b",
    "",
    "--changeset_b",
    "",
    `DELETE ${accountUrl}/t(PartitionKey='pk',RowKey='r') HTTP/1.1`,
    "",
    "--changeset_b--",
    "--batch_a--",
  ].join("\r\n");
}
