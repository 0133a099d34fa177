// Tables API compatibility: a bot's tables and rows through @botpress/client
// with a bot API key (docs/tables.md), on SQLite and on PostgreSQL.

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client, AlreadyExistsError, InvalidPayloadError, ResourceNotFoundError } from '@botpress/client'
import { startServer, backends } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', 'x-zui': { searchable: true } },
    age: { type: 'number' },
    vip: { type: 'boolean' },
    meta: { type: 'object' },
  },
  required: ['name'],
}

for (const backend of backends()) {
  describe(`Tables API (${backend})`, () => {
    let server, bot, rt, other

    before(async () => {
      server = await startServer({ backend })
      const admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
      ;({ bot } = await admin.createBot({ name: 'tables' }))
      rt = new Client({ apiUrl: server.apiUrl, token: (await admin.createBotApiKey({ botId: bot.id })).value, botId: bot.id })
      const { bot: bot2 } = await admin.createBot({ name: 'another' })
      other = new Client({ apiUrl: server.apiUrl, token: (await admin.createBotApiKey({ botId: bot2.id })).value, botId: bot2.id })
    })

    after(async () => {
      await server?.stop()
    })

    test('tables: create, get, get-or-create, list, update, rename a column, duplicate, delete', async () => {
      const { table } = await rt.createTable({ name: 'PeopleTable', schema, tags: { team: 'a' } })
      assert.equal(table.name, 'PeopleTable')
      assert.equal(table.schema.properties.age.type, 'number')
      await assert.rejects(rt.createTable({ name: 'PeopleTable', schema }), AlreadyExistsError)
      const got = await rt.getTable({ table: 'PeopleTable' })
      assert.equal(got.table.id, table.id)
      assert.equal(got.rows, 0)
      const again = await rt.getOrCreateTable({ table: 'PeopleTable', schema })
      assert.equal(again.created, false)
      const { tables } = await rt.listTables({ tags: { team: 'a' } })
      assert.deepEqual(tables.map((t) => t.id), [table.id])
      const withCity = { ...schema, properties: { ...schema.properties, city: { type: 'string' } } }
      const { table: updated } = await rt.updateTable({ table: table.id, schema: withCity, keyColumn: 'name' })
      assert.equal(updated.keyColumn, 'name')
      const { table: renamed } = await rt.renameTableColumn({ table: table.id, name: 'city', newName: 'town' })
      assert.ok(renamed.schema.properties.town)
      const { table: copy } = await rt.duplicateTable({ sourceTableId: table.id, tableName: 'CopyTable', schemaOnly: true })
      assert.equal(copy.name, 'CopyTable')
      await rt.deleteTable({ table: copy.id })
      await assert.rejects(rt.getTable({ table: copy.id }), ResourceNotFoundError)
      await assert.rejects(other.getTable({ table: table.id }), ResourceNotFoundError)
    })

    test('rows: create, get, find with filters, update, upsert, delete', async () => {
      await rt.createTable({ name: 'RowsTable', schema, keyColumn: 'name' })
      const { rows } = await rt.createTableRows({
        table: 'RowsTable',
        rows: Array.from({ length: 20 }, (_, i) => ({ name: `p${i}`, age: i, vip: i % 2 === 0, meta: { level: i % 3 } })),
      })
      assert.equal(rows.length, 20)
      assert.equal(rows[3].age, 3)
      assert.deepEqual((await rt.getTableRow({ table: 'RowsTable', id: rows[3].id })).row, rows[3])
      const found = await rt.findTableRows({
        table: 'RowsTable',
        filter: { $and: [{ age: { $gte: 10 } }, { vip: true }], 'meta.level': { $in: [0, 1] } },
        orderBy: 'age',
        orderDirection: 'desc',
        limit: 3,
      })
      assert.deepEqual(found.rows.map((r) => r.name), ['p18', 'p16', 'p12'])
      assert.equal(found.hasMore, true) // p10 is next
      const grouped = await rt.findTableRows({ table: 'RowsTable', group: { vip: 'key', age: ['sum', 'count'] } })
      assert.deepEqual(grouped.rows, [
        { vipKey: false, ageSum: 100, ageCount: 10 },
        { vipKey: true, ageSum: 90, ageCount: 10 },
      ])
      const searched = await rt.findTableRows({ table: 'RowsTable', search: 'p7', limit: 1 })
      assert.equal(searched.rows[0].name, 'p7')
      assert.equal(searched.rows[0].similarity, 1)
      const { rows: upd } = await rt.updateTableRows({ table: 'RowsTable', rows: [{ id: rows[0].id, age: 100 }] })
      assert.equal(upd[0].age, 100)
      const up = await rt.upsertTableRows({ table: 'RowsTable', rows: [{ name: 'p1', age: 101 }, { name: 'new', age: 1 }] })
      assert.equal(up.updated[0].id, rows[1].id)
      assert.equal(up.inserted[0].name, 'new')
      const { deletedRows } = await rt.deleteTableRows({ table: 'RowsTable', filter: { age: { $gte: 100 } } })
      assert.equal(deletedRows, 2)
      await assert.rejects(rt.findTableRows({ table: 'RowsTable', filter: { missing: 1 } }), InvalidPayloadError)
      await assert.rejects(rt.findTableRows({ table: 'RowsTable', filter: { age: { $near: 1 } } }), InvalidPayloadError)
      await assert.rejects(rt.createTableRows({ table: 'RowsTable', rows: [{ age: 1 }] }), InvalidPayloadError)
      await assert.rejects(other.findTableRows({ table: 'RowsTable' }), ResourceNotFoundError)
      assert.equal((await rt.getTable({ table: 'RowsTable' })).rows, 19)
    })

    test('export to a file, import from one, and the jobs', async () => {
      await rt.createTable({ name: 'ExportTable', schema })
      await rt.createTableRows({ table: 'ExportTable', rows: [{ name: 'a', age: 1, meta: { x: [1] } }, { name: 'b', vip: true }] })
      const { job } = await rt.exportTable({ table: 'ExportTable', format: 'json' })
      assert.equal(job.status, 'completed')
      const { file } = await rt.getFile({ id: job.outputFileId })
      const exported = await (await fetch(file.url)).json()
      assert.deepEqual(exported.map((r) => r.name), ['a', 'b'])
      await rt.createTable({ name: 'ImportTable', schema })
      const imported = await rt.importTable({ table: 'ImportTable', fileId: job.outputFileId })
      assert.equal(imported.job.status, 'completed')
      const { rows } = await rt.findTableRows({ table: 'ImportTable' })
      assert.deepEqual(rows.map((r) => [r.name, r.age, r.vip, r.meta]), [['a', 1, null, { x: [1] }], ['b', null, true, null]])
      const { jobs } = await rt.getTableJobs({ table: 'ImportTable' })
      assert.deepEqual(jobs.map((j) => j.type), ['import'])
    })
  })
}
